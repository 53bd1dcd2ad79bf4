"""Fixed twin of 34: the label column is taken as a vector."""
import stagegraph as sg

# expect: clean
# e2e: range.labels=0,10


@sg.function
def accuracy(logits: sg.f32["N", 10], labels: sg.i64["N", 1]):
    pred = sg.argmax(logits, axis=1)                           # [N]
    return sg.mean(pred == labels[:, 0])
