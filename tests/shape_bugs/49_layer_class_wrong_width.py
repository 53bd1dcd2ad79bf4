"""Model code written as classes: a Dense layer object holds its weights, and
the model composes two of them, but the second layer is built with weights for
a 64-wide input while the first gives 128 features. The error is inside the
method, at the matmul, with the call as a note."""
import stagegraph as sg


class Dense:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, x):
        return sg.relu(x @ self.w + self.b)  # expect: error


class Model:
    def __init__(self, w1, b1, w2, b2):
        self.hidden = Dense(w1, b1)
        self.out = Dense(w2, b2)

    def __call__(self, x):
        return self.out(self.hidden(x))  # allow: error


@sg.function
def classify(x: sg.f32["N", 32], w1: sg.f32[32, 128], b1: sg.f32[128],
             w2: sg.f32[64, 10], b2: sg.f32[10]):
    return Model(w1, b1, w2, b2)(x)
