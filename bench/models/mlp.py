"""Benchmark `mlp`: dense kernels. 784 -> 512 -> 512 -> 10 with relu, one graph for
every batch size (the symbolic dim N); the benchmark runs batch 1 and batch 64.

    graph-compile bench/models/mlp.py --weights bench/out/data/mlp/weights.safetensors
    STAGEGRAPH_WEIGHTS=... PYTHONPATH=compiler/python python3 bench/models/run_eager.py mlp ...
"""
import stagegraph as sg


@sg.function
def mlp(x: sg.f32["N", 784]) -> sg.f32["N", 10]:
    h = sg.relu(x @ sg.weight("w1") + sg.weight("b1"))
    h = sg.relu(h @ sg.weight("w2") + sg.weight("b2"))
    return h @ sg.weight("w3") + sg.weight("b3")
