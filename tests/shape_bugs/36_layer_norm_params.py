"""A transformer feed-forward block whose layer norm is given the parameters
of a 512-wide model while the block is 256 wide."""
import stagegraph as sg


@sg.function
def ffn_block(x: sg.f32["T", 256], w1: sg.f32[256, 1024], w2: sg.f32[1024, 256],
              gamma: sg.f32[512], beta: sg.f32[512]):
    h = x + sg.gelu(x @ w1) @ w2                               # [T, 256]
    return sg.layer_norm(h, gamma, beta)  # expect: error
