"""Cross-entropy over 5 classes with targets one-hot encoded to a depth of 10
copied from another model."""
import stagegraph as sg

# e2e: range.labels=0,5


@sg.function
def cross_entropy(logits: sg.f32["N", 5], labels: sg.i64["N"]):
    target = sg.one_hot(labels, 10)                            # [N, 10]
    return -sg.mean(sg.sum(target * sg.log_softmax(logits), axis=1))  # expect: error
