"""Convolutions over stored filters, for tests/e2e/test_quantize.py: SAME with a bias
and relu (conv2d_bias), VALID with stride 2 and no bias (conv2d), SAME with dilation
2, a bias and tanh, then a dense layer. QUANTIZE is "" (graph-compile --quantize
chooses) or a storage for every filter (sg.weight(name, quantize=...)); the test
writes each copy."""
import stagegraph as sg


@sg.function
def net(x: sg.f32[4, 12, 12, 3]) -> sg.f32[4, 10]:
    h = sg.relu(sg.conv2d(x, sg.weight("k1"QUANTIZE), padding="SAME") + sg.weight("c1"))
    h = sg.conv2d(h, sg.weight("k2"QUANTIZE), stride=2)
    h = sg.tanh(sg.conv2d(h, sg.weight("k3"QUANTIZE), padding="SAME", dilation=2) + sg.weight("c3"))
    return sg.reshape(h, (4, 800)) @ sg.weight("w") + sg.weight("b")
