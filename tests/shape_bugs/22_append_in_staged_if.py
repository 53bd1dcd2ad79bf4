"""Data augmentation that appends a rescaled copy to a Python list inside a
staged if: the list's length would depend on a run-time value."""
import stagegraph as sg


@sg.function
def augment(x: sg.f32["N", 8], threshold: sg.f32):
    parts = [x]
    if sg.max(x) > threshold:
        parts.append(x / sg.max(x))  # expect: error
    return sg.concatenate(parts, axis=0)
