"""A summary of two layers' mean activations stacked into one tensor, though
the layers have 64 and 32 units."""
import stagegraph as sg


@sg.function
def layer_summary(h1: sg.f32["N", 64], h2: sg.f32["N", 32]):
    return sg.stack([sg.mean(h1, axis=0), sg.mean(h2, axis=0)])  # expect: error
