"""An MNIST MLP fed RGB images: reshape(-1, 784) absorbs the 3 channels into
the batch ([3N, 784]), and the loss then pairs 3N logits with N targets. The
two symbolic dims can never agree, so the loss line deserves a warning (and
fails at run time); the reshape itself may be flagged too."""
import stagegraph as sg

# e2e: range.labels=0,10


@sg.function
def mlp_loss(images: sg.f32["N", 28, 28, 3], labels: sg.i64["N"], w: sg.f32[784, 10], b: sg.f32[10]):
    x = sg.reshape(images, (-1, 784))  # allow: warning
    logits = x @ w + b                                         # [3N, 10]
    target = sg.one_hot(labels, 10)                            # [N, 10]
    return -sg.mean(sg.sum(target * sg.log_softmax(logits), axis=1))  # expect: warning
