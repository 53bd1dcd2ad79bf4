"""Fixed twin of 02: the dense weight takes the 7x7x64 features."""
import stagegraph as sg

# expect: clean


@sg.function
def classifier(images: sg.f32["N", 28, 28, 1],
               k1: sg.f32[5, 5, 1, 32], c1: sg.f32[32],
               k2: sg.f32[5, 5, 32, 64], c2: sg.f32[64],
               w_fc: sg.f32[3136, 10], b_fc: sg.f32[10]):
    h = sg.max_pool2d(sg.relu(sg.conv2d(images, k1, padding="SAME") + c1), 2)
    h = sg.max_pool2d(sg.relu(sg.conv2d(h, k2, padding="SAME") + c2), 2)
    flat = sg.reshape(h, (h.shape[0], -1))                     # [N, 3136]
    logits = flat @ w_fc + b_fc
    return sg.log_softmax(logits)
