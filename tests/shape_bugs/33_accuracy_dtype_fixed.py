"""Fixed twin of 33: the labels are cast to i64."""
import stagegraph as sg

# expect: clean
# e2e: range.labels=0,10


@sg.function
def accuracy(logits: sg.f32["N", 10], labels: sg.i32["N"]):
    pred = sg.argmax(logits, axis=1)                           # i64[N]
    return sg.mean(pred == labels.astype(sg.i64))
