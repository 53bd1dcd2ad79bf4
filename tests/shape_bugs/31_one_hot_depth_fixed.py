"""Fixed twin of 31: the one-hot depth is the number of classes."""
import stagegraph as sg

# expect: clean
# e2e: range.labels=0,5


@sg.function
def cross_entropy(logits: sg.f32["N", 5], labels: sg.i64["N"]):
    target = sg.one_hot(labels, 5)                             # [N, 5]
    return -sg.mean(sg.sum(target * sg.log_softmax(logits), axis=1))
