"""The systems under test: ours first, then the peers in table order. Each peer module
has NAME, build(workload, weights, out_dir) -> file and load(workload, file, threads)
-> run(inputs) -> {name: array}."""
import importlib
import importlib.util

OURS = "stagegraph"
# (name in the tables, module in bench/peers, the Python package it needs)
PEERS = [("onnxruntime", "onnx_peer", "onnxruntime"),
         ("tflite", "tflite_peer", "tensorflow"),
         ("jax", "jax_peer", "jax"),
         ("pytorch", "torch_peer", "torch"),
         ("tensorflow", "tf_peer", "tensorflow")]
SYSTEMS = [OURS] + [name for name, _, _ in PEERS]


def package_of(name):
    return {n: pkg for n, _, pkg in PEERS}[name]


def installed(name):
    return importlib.util.find_spec(package_of(name)) is not None


def module(name):
    return importlib.import_module({n: mod for n, mod, _ in PEERS}[name])
