"""Accuracy of i64 argmax predictions compared with i32 labels: two tensors of
different dtypes combined elementwise."""
import stagegraph as sg

# e2e: range.labels=0,10


@sg.function
def accuracy(logits: sg.f32["N", 10], labels: sg.i32["N"]):
    pred = sg.argmax(logits, axis=1)                           # i64[N]
    return sg.mean(pred == labels)  # expect: error
