"""Accuracy with labels stored as a column [N, 1]: comparing them with the [N]
predictions broadcasts to an [N, N] table."""
import stagegraph as sg

# e2e: range.labels=0,10


@sg.function
def accuracy(logits: sg.f32["N", 10], labels: sg.i64["N", 1]):
    pred = sg.argmax(logits, axis=1)                           # [N]
    return sg.mean(pred == labels)  # expect: warning
