"""Fixed twin of 39: the shared weight is square."""
import stagegraph as sg

# expect: clean


@sg.function
def tower(x: sg.f32["N", 64], w: sg.f32[64, 64], b: sg.f32[64]):
    h = x
    for layer in range(3):
        h = sg.relu(h @ w + b)
    return h
