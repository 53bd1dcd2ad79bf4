"""Optional quantisation behind a staged flag: one branch makes `y` an i32
tensor, the other leaves it f32. Both branches of a staged if must agree on
the dtype; the error may point at the if or at either assignment."""
import stagegraph as sg

# expect: error@11|12|14


@sg.function
def maybe_quantize(x: sg.f32["N", 8], quantize: sg.bool):
    if quantize:
        y = sg.astype(sg.round(x * 127.0), sg.i32)
    else:
        y = x
    return y
