"""Several entry points over two independent symbolic sizes, N and M."""
import stagegraph as sg

# e2e: N=1,3 M=2,5


@sg.function
def pairwise_sq_dist(a: sg.f32["N", 3], b: sg.f32["M", 3]):
    diff = a[:, None, :] - b[None, :, :]          # [N, M, 3]
    return sg.sum(diff * diff, axis=-1)           # [N, M]


@sg.function
def nearest(a: sg.f32["N", 3], b: sg.f32["M", 3]):
    d = pairwise_sq_dist(a, b)                    # a graph function, called
    return sg.argmin(d, axis=1), sg.min(d, axis=1)


@sg.function
def merge(a: sg.f32["N", 4], b: sg.f32["M", 4]):
    both = sg.concatenate([a, b], axis=0)         # [N+M, 4]
    centre = sg.mean(both, axis=0)
    return {"rows": both - centre, "count": len(both), "spread": sg.max(both, axis=0) - sg.min(both, axis=0)}


@sg.function
def batch_norm(x: sg.f32["N", 6], gamma: sg.f32[6], beta: sg.f32[6]):
    mu = sg.mean(x, axis=0, keepdims=True)
    var = sg.mean(sg.square(x - mu), axis=0, keepdims=True)
    return (x - mu) / sg.sqrt(var + 1e-3) * gamma + beta


if __name__ == "__main__":
    import numpy as np

    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal((6, 3)).astype(np.float32)
    index, dist = nearest(a=a, b=b)
    print("nearest:", index, dist)
    print("merge count:", merge(a=rng.standard_normal((2, 4)).astype(np.float32),
                                b=rng.standard_normal((3, 4)).astype(np.float32))["count"])
