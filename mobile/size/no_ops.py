"""A program without op nodes (its entry returns its inputs, swapped): the core
runtime, built with no kernels at all, loads and runs it (mobile.core_* tests)."""
import stagegraph as sg


@sg.function
def swap(a: sg.f32[3], b: sg.f32["N", 3]):
    return b, a


if __name__ == "__main__":
    import numpy as np

    print(swap(a=np.ones(3, np.float32), b=np.zeros((2, 3), np.float32)))
