"""CNN whose fully connected weight is sized for the wrong feature map: it
expects 4x4x64 features (what VALID padding would give) but SAME padding keeps
7x7x64 = 3136 of them."""
import stagegraph as sg


@sg.function
def classifier(images: sg.f32["N", 28, 28, 1],
               k1: sg.f32[5, 5, 1, 32], c1: sg.f32[32],
               k2: sg.f32[5, 5, 32, 64], c2: sg.f32[64],
               w_fc: sg.f32[1024, 10], b_fc: sg.f32[10]):
    h = sg.max_pool2d(sg.relu(sg.conv2d(images, k1, padding="SAME") + c1), 2)
    h = sg.max_pool2d(sg.relu(sg.conv2d(h, k2, padding="SAME") + c2), 2)
    flat = sg.reshape(h, (h.shape[0], -1))                     # [N, 3136]
    logits = flat @ w_fc + b_fc  # expect: error
    return sg.log_softmax(logits)
