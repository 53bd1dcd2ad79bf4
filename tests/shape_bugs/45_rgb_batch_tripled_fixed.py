"""Fixed twin of 45: the images are grey, one channel."""
import stagegraph as sg

# expect: clean
# e2e: range.labels=0,10


@sg.function
def mlp_loss(images: sg.f32["N", 28, 28, 1], labels: sg.i64["N"], w: sg.f32[784, 10], b: sg.f32[10]):
    x = sg.reshape(images, (-1, 784))                          # [N, 784]
    logits = x @ w + b
    target = sg.one_hot(labels, 10)                            # [N, 10]
    return -sg.mean(sg.sum(target * sg.log_softmax(logits), axis=1))
