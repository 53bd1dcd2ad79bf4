"""Shape ops: reshape (with -1 and a symbolic batch), transpose, x.T,
concatenate, stack, expand_dims and squeeze."""
import stagegraph as sg

# e2e: N=1,3


@sg.function
def rearrange(x: sg.f32["N", 2, 6], y: sg.f32["N", 4]):
    a = sg.reshape(x, (x.shape[0], 3, 4))       # [N, 3, 4]
    b = sg.transpose(a, (0, 2, 1))              # [N, 4, 3]
    c = sg.reshape(b, (-1, 12))                 # [N, 12]
    d = sg.concatenate([c, y, y * 2.0], axis=1)  # [N, 20]
    e = sg.transpose(x)                         # [6, 2, N]
    s = sg.stack([y, -y], axis=-1)              # [N, 4, 2]
    t = sg.squeeze(sg.expand_dims(y, 1), axis=1)
    return d, e, s, t + y.T.T


@sg.function
def flatten_grid(g: sg.f32[3, 4, 5]):
    return sg.reshape(g, (-1,)), sg.reshape(g, (4, -1)), g.T, sg.concatenate([g, g], axis=-1)


if __name__ == "__main__":
    import numpy as np

    d, e, s, t = rearrange(x=np.arange(24, dtype=np.float32).reshape(2, 2, 6),
                           y=np.ones((2, 4), dtype=np.float32))
    print(d.shape, e.shape, s.shape, t.shape)
