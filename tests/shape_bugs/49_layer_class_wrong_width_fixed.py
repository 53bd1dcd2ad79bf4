"""The fixed twin: the second layer's weights take the first layer's 128
features."""
import stagegraph as sg

# expect: clean


class Dense:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, x):
        return sg.relu(x @ self.w + self.b)


class Model:
    def __init__(self, w1, b1, w2, b2):
        self.hidden = Dense(w1, b1)
        self.out = Dense(w2, b2)

    def __call__(self, x):
        return self.out(self.hidden(x))


@sg.function
def classify(x: sg.f32["N", 32], w1: sg.f32[32, 128], b1: sg.f32[128],
             w2: sg.f32[128, 10], b2: sg.f32[10]):
    return Model(w1, b1, w2, b2)(x)
