"""Quantized models beside the peers' quantized models of the same networks, one
thread, each beside its own f32 model, timed in alternation (BENCHMARKS.md's method):

- ours: `graph-compile --quantize int8` (per output channel) and `--quantize int4`
  (blocks of 32), activations quantized per row at each run; `graph-run --bench`.
- ONNX Runtime: `quantize_dynamic` (QInt8 weights per channel, activations quantized
  per run: DynamicQuantizeLinear + MatMulInteger / ConvInteger) for int8; for int4
  each MatMul with a constant 2-D weight rewritten as com.microsoft MatMulNBits (4
  bits, blocks of 32, symmetric, packed by onnxruntime's own quantize_matmul_4bits,
  accuracy_level 4: int8 activations, as ours), what MatMulNBitsQuantizer writes
  (that class needs the onnx_ir package, which onnxruntime does not require).
- TensorFlow Lite: the f32 peer's SavedModel converted again with
  `optimizations = [tf.lite.Optimize.DEFAULT]` and no representative dataset
  (dynamic range: int8 weights, activations quantized per run); int8 only.
- ExecuTorch: XNNPACK exports (f32, and dynamic int8 per channel through
  XNNPACKQuantizer + to_edge_transform_and_lower) where the `executorch` package
  imports; otherwise one row per case says why.

    bench/.venv/bin/python bench/quantized_peers.py [--build build] [--runs 200] [--rounds 3]
        [--cases mlp/b1,rnn/t100] [--data bench/out/data]

Needs bench/.venv (bench/compare makes it: numpy, onnx, onnxruntime, tensorflow-cpu,
safetensors; torch and executorch for the ExecuTorch rows) and bench/out/data
(bench/models/data.py). Prints one Markdown table: per case, scheme and system, the
system's f32 and quantized medians (each the median of the rounds' medians), the
quantized model's max relative error against the same system's f32 outputs (float
outputs; beam's token checksum and mlp/cnn top-1 beside it), how many dense and
convolution weights the quantized file holds quantized, and `peer q / ours q`: the
peer's quantized median over ours at the same scheme (> 1: ours is faster). Below
the table: each peer's f32 outputs against ours (the same networks), versions.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import onnx_peer  # noqa: E402
import tflite_peer  # noqa: E402

CASES = [("mlp", "b1"), ("mlp", "b64"), ("rnn", "t100"), ("beam", "s50"), ("cnn", "1")]
SCHEMES = ("int8", "int4")
SYSTEMS = ("ours", "ONNX Runtime", "TFLite", "ExecuTorch")


class Unavailable(Exception):
    """This system has no model at this scheme (the row says why)."""


def read_weights(path):
    from safetensors.numpy import load_file
    return dict(load_file(path))


def short(e):
    text = f"{type(e).__name__}: {e}".replace("\n", " ").replace("|", "/")
    return text if len(text) <= 110 else text[:107] + "..."


# ---------------------------------------------------------------- ours

class Ours:
    def __init__(self, build, workload, data, work):
        self.compile = os.path.join(build, "tools", "graph-compile")
        self.graph_run = os.path.join(build, "tools", "graph-run")
        self.models, self.quantized = {}, {}
        model = os.path.join(ROOT, "bench", "models", f"{workload}.py")
        for scheme in ("f32",) + SCHEMES:
            path = os.path.join(work, f"ours_{workload}_{scheme}.sgraph")
            extra = [] if scheme == "f32" else ["--quantize", scheme, "--quantize-report"]
            out = subprocess.run([self.compile, model, "-o", path, "--weights", os.path.join(data, "weights.safetensors"),
                                  *extra], check=True, capture_output=True, text=True).stdout
            self.models[scheme] = path
            if scheme != "f32":   # the report's rows: one per quantized weight, then "total"
                rows = [l for l in out.splitlines()[1:] if l.strip() and not l.startswith("total")]
                self.quantized[scheme] = f"{len(rows)} weights"

    def _args(self, scheme, files):
        args = [self.graph_run, self.models[scheme], "--threads", "1"]
        for name, path in files.items():
            args += ["--input", f"{name}={path}"]
        return args

    def outputs(self, scheme, files, work):
        out_dir = tempfile.mkdtemp(dir=work)
        subprocess.run(self._args(scheme, files) + ["--output-dir", out_dir], check=True, capture_output=True)
        return {f[:-4]: np.load(os.path.join(out_dir, f)) for f in sorted(os.listdir(out_dir))}

    def median(self, scheme, files, runs):
        out = subprocess.run(self._args(scheme, files) + ["--bench", str(runs)], capture_output=True, text=True,
                             check=True).stdout
        return float(re.search(r"median ([0-9.]+) ms", out).group(1))


# ---------------------------------------------------------------- ONNX Runtime

def _onnx_graphs(graph):
    """The graph and every subgraph (Loop and If bodies), each with its parents."""
    stack = [(graph, [])]
    while stack:
        g, parents = stack.pop()
        yield g, parents
        for node in g.node:
            for attr in node.attribute:
                for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                    stack.append((sub, parents + [g]))


def _initializer(name, graph, parents):
    for g in [graph] + parents[::-1]:
        for init in g.initializer:
            if init.name == name:
                return init, g
    return None, None


def onnx_dense_count(path):
    """'quantized of all' dense and convolution nodes with a constant weight."""
    import onnx
    model = onnx.load(path)
    quantized = total = 0
    for g, parents in _onnx_graphs(model.graph):
        for node in g.node:
            if node.op_type in ("MatMulInteger", "ConvInteger", "MatMulNBits", "DynamicQuantizeMatMul",
                                "QLinearMatMul", "QLinearConv"):
                quantized += 1
                total += 1
            elif node.op_type in ("MatMul", "Gemm", "Conv") and _initializer(node.input[1], g, parents)[0] is not None:
                total += 1
    return f"{quantized} of {total}"


def onnx_int4(f32_path, out_path, block=32):
    """Each MatMul whose B is a constant f32 [K, N] (in its graph or an enclosing one)
    as MatMulNBits: 4 bits, blocks of `block` along K, symmetric (zero point 8, no
    zero-point input), accuracy_level 4 (int8 activations), packed by onnxruntime's
    quantize_matmul_4bits: what MatMulNBitsQuantizer's default config writes."""
    import onnx
    from onnx import helper, numpy_helper
    from onnxruntime.capi._pybind_state import quantize_matmul_4bits
    model = onnx.load(f32_path)
    for g, parents in list(_onnx_graphs(model.graph)):
        for index, node in enumerate(g.node):
            init, owner = _initializer(node.input[1], g, parents) if node.op_type == "MatMul" else (None, None)
            w = numpy_helper.to_array(init) if init is not None else None
            if w is None or w.ndim != 2 or w.dtype != np.float32:
                continue
            k, n = w.shape
            blocks = (k + block - 1) // block
            padded = np.zeros((blocks * block, n), np.float32)
            padded[:k] = w
            packed = np.zeros((n, blocks, block // 2), np.uint8)
            scales = np.zeros((n, blocks), np.float32)
            zero_point = np.zeros((n, (blocks + 1) // 2), np.uint8)
            quantize_matmul_4bits(packed, np.ascontiguousarray(padded), scales, zero_point, block, n, k, True)
            q_name, s_name = init.name + "_Q4", init.name + "_scales"
            if not any(i.name == q_name for i in owner.initializer):
                owner.initializer.extend([numpy_helper.from_array(packed, q_name),
                                          numpy_helper.from_array(scales, s_name)])
            # In place: the subgraphs listed above live inside these nodes.
            g.node[index].CopyFrom(helper.make_node("MatMulNBits", [node.input[0], q_name, s_name],
                                                    list(node.output), domain="com.microsoft", K=k, N=n, bits=4,
                                                    block_size=block, accuracy_level=4))
    used = {i for g, _ in _onnx_graphs(model.graph) for node in g.node for i in node.input}
    for g, _ in _onnx_graphs(model.graph):   # drop the f32 weights nothing reads now
        keep = [i for i in g.initializer if i.name in used]
        del g.initializer[:]
        g.initializer.extend(keep)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(model, out_path)
    return out_path


def onnx_models(workload, weights, work):
    from onnxruntime.quantization import QuantType, quantize_dynamic
    f32 = onnx_peer.build(workload, weights, work)
    models = {"f32": (f32, "")}
    try:
        int8 = os.path.join(work, f"{workload}_int8.onnx")
        quantize_dynamic(f32, int8, weight_type=QuantType.QInt8, per_channel=True)
        models["int8"] = (int8, onnx_dense_count(int8))
    except Exception as e:  # noqa: BLE001
        models["int8"] = Unavailable(f"quantize_dynamic failed: {short(e)}")
    try:
        int4 = onnx_int4(f32, os.path.join(work, f"{workload}_int4.onnx"))
        models["int4"] = (int4, onnx_dense_count(int4))
    except Exception as e:  # noqa: BLE001
        models["int4"] = Unavailable(f"MatMulNBits rewrite failed: {short(e)}")
    runners = {}
    for scheme, m in models.items():
        if isinstance(m, Unavailable):
            runners[scheme] = m
            continue
        try:
            runners[scheme] = (onnx_peer.load(workload, m[0], 1), m[1])
        except Exception as e:  # noqa: BLE001
            runners[scheme] = Unavailable(f"ORT cannot load it: {short(e)}")
    return runners


# ---------------------------------------------------------------- TensorFlow Lite

def tflite_dense_count(path):
    from tensorflow.lite.python import schema_py_generated as schema
    with open(path, "rb") as f:
        model = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(f.read(), 0))
    codes = [max(c.builtinCode, c.deprecatedBuiltinCode) for c in model.operatorCodes]
    dense = {schema.BuiltinOperator.FULLY_CONNECTED, schema.BuiltinOperator.CONV_2D,
             schema.BuiltinOperator.BATCH_MATMUL, schema.BuiltinOperator.DEPTHWISE_CONV_2D}
    quantized = total = 0
    for sub in model.subgraphs:
        for op in sub.operators:
            if codes[op.opcodeIndex] in dense:
                total += 1
                quantized += sub.tensors[op.inputs[1]].type in (schema.TensorType.INT8, schema.TensorType.INT4)
    return f"{quantized} of {total}"


def tflite_models(workload, weights, work):
    import tensorflow as tf
    folder = os.path.join(work, f"tflite_{workload}")
    os.makedirs(folder)
    f32 = tflite_peer.build(workload, weights, folder)   # also writes folder/WORKLOAD.savedmodel
    runners = {"f32": (tflite_peer.load(workload, f32, 1), "")}
    try:
        converter = tf.lite.TFLiteConverter.from_saved_model(os.path.join(folder, f"{workload}.savedmodel"))
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
        converter.optimizations = [tf.lite.Optimize.DEFAULT]   # no representative dataset: dynamic range
        int8 = os.path.join(folder, f"{workload}_dynamic_range.tflite")
        with open(int8, "wb") as f:
            f.write(converter.convert())
        runners["int8"] = (tflite_peer.load(workload, int8, 1), tflite_dense_count(int8))
    except Exception as e:  # noqa: BLE001
        runners["int8"] = Unavailable(f"dynamic-range conversion failed: {short(e)}")
    runners["int4"] = Unavailable("no int4 dynamic-range scheme in TFLiteConverter")
    return runners


# ---------------------------------------------------------------- ExecuTorch

def _torch_module(workload, weights):
    """The network as a torch.nn.Module over the same weights, for torch.export:
    loops unrolled at export (rnn's T = 100 steps and beam's 50 are the case's), the
    end-of-sequence test as torch.where."""
    import torch
    w = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in weights.items()}

    def linear(x, name, bias=None):
        m = torch.nn.Linear(w[name].shape[0], w[name].shape[1], bias=bias is not None)
        m.weight.data = w[name].t().contiguous()
        if bias is not None:
            m.bias.data = w[bias].clone()
        return m

    class Mlp(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.l1, self.l2, self.l3 = linear(None, "w1", "b1"), linear(None, "w2", "b2"), linear(None, "w3", "b3")

        def forward(self, x):
            return self.l3(torch.relu(self.l2(torch.relu(self.l1(x)))))

    class Cnn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.convs = torch.nn.ModuleList()
            for i in (1, 2, 3):
                k = w[f"k{i}"]   # HWIO
                c = torch.nn.Conv2d(k.shape[2], k.shape[3], 3, padding=1)
                c.weight.data = k.permute(3, 2, 0, 1).contiguous()
                c.bias.data = w[f"c{i}"].clone()
                self.convs.append(c)
            self.dense = linear(None, "w", "b")

        def forward(self, x):   # x NHWC, as every system gets it
            h = x.permute(0, 3, 1, 2)
            for c in self.convs:
                h = torch.nn.functional.max_pool2d(torch.relu(c(h)), 2)
            return self.dense(h.permute(0, 2, 3, 1).reshape(1, -1))

    class Rnn(torch.nn.Module):
        def __init__(self, steps):
            super().__init__()
            self.steps, self.w, self.u = steps, linear(None, "w", "b"), linear(None, "u")

        def forward(self, xs):
            h = torch.zeros(1, 256)
            for t in range(self.steps):
                h = torch.tanh(self.w(xs[t:t + 1]) + self.u(h))
            return h.reshape(256)

    class Beam(torch.nn.Module):
        def __init__(self, steps):
            super().__init__()
            self.steps, self.emb = steps, torch.nn.Parameter(w["embedding"].clone(), requires_grad=False)
            self.w, self.u, self.v = linear(None, "w", "b"), linear(None, "u"), linear(None, "v")

        def forward(self, start):
            h, tok = torch.zeros(1, 128), start
            score, check = torch.zeros(()), torch.zeros((), dtype=torch.int64)
            for _ in range(self.steps):
                h = torch.tanh(self.w(self.emb[tok].reshape(1, 64)) + self.u(h))
                logits = self.v(h).reshape(1000)
                nxt = torch.argmax(logits)
                score = score + torch.max(logits)
                tok = torch.where(nxt == 1, start, nxt)
                check = (check * 31 + tok) % 1000003
            return tok, score, check

    return {"mlp": Mlp, "cnn": Cnn, "rnn": lambda: Rnn(100), "beam": lambda: Beam(50)}[workload]().eval()


def executorch_models(workload, weights, case_arrays):
    try:
        import torch
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
        from executorch.exir import to_edge_transform_and_lower
        from executorch.runtime import Runtime
    except Exception as e:  # noqa: BLE001
        raise Unavailable(f"not importable in this Python ({short(e)})")
    torch.set_num_threads(1)
    module = _torch_module(workload, weights)
    if workload == "beam":
        names, example = ["start"], (torch.tensor(int(case_arrays["start"])),)
        outputs = ["token", "score", "check"]
    else:
        names = list(case_arrays)
        example = tuple(torch.from_numpy(case_arrays[n]) for n in names)
        outputs = ["output_0"]
    runtime = Runtime.get()

    def lower(exported, tag):
        program = to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()]).to_executorch()
        method = runtime.load_program(program.buffer).load_method("forward")
        args = list(example)

        def run(_inputs):
            return dict(zip(outputs, (o.numpy() for o in method.execute(args))))
        return run, f"{tag} {len(program.buffer):,} B"

    runners = {"f32": lower(torch.export.export(module, example), "")[:1] + ("",)}
    try:
        from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (XNNPACKQuantizer,
                                                                             get_symmetric_quantization_config)
        try:
            from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
        except ImportError:
            from torch.ao.quantization.quantize_pt2e import convert_pt2e, prepare_pt2e
        quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True,
                                                                                     is_dynamic=True))
        graph = torch.export.export(module, example).module()
        prepared = prepare_pt2e(graph, quantizer)
        prepared(*example)
        converted = convert_pt2e(prepared)
        run, size = lower(torch.export.export(converted, example), "dynamic int8,")
        runners["int8"] = (run, size)
    except Exception as e:  # noqa: BLE001
        runners["int8"] = Unavailable(f"dynamic int8 export failed: {short(e)}")
    runners["int4"] = Unavailable("not built here (torchao's 8da4w config for XNNPACK not tried)")
    return runners


# ---------------------------------------------------------------- timing and checks

def peer_median(run, inputs, runs):
    for _ in range(5):
        run(inputs)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        run(inputs)
        times.append(time.perf_counter() - t)
    return 1e3 * float(np.median(times))


def _pairs(got, want):
    """Outputs matched by name, else (one output each) the only ones."""
    common = [n for n in want if n in got]
    if common:
        return [(got[n], want[n], n) for n in common]
    if len(got) == 1 and len(want) == 1:
        return [(next(iter(got.values())), next(iter(want.values())), next(iter(want)))]
    raise ValueError(f"outputs {sorted(got)} against {sorted(want)}")


def max_rel_err(got, want):
    """max |got - want| / max |want| over the float outputs."""
    worst = 0.0
    for g, w, _ in _pairs(got, want):
        w64, g64 = np.asarray(w, np.float64), np.asarray(g, np.float64).reshape(np.shape(w))
        if np.asarray(w).dtype.kind != "f":
            continue
        worst = max(worst, float(np.max(np.abs(g64 - w64))) / max(float(np.max(np.abs(w64))), 1e-30))
    return worst


def agreement(workload, got, want):
    pairs = {n: (g, w) for g, w, n in _pairs(got, want)}
    if workload == "rnn":
        return ""
    if workload == "beam":
        g, w = pairs["check"]
        return "tokens equal" if int(g) == int(w) else "tokens differ"
    g, w = next(iter(pairs.values()))
    g, w = np.asarray(g).reshape(-1, np.shape(g)[-1]), np.asarray(w).reshape(-1, np.shape(w)[-1])
    return f"top-1 {np.mean(g.argmax(1) == w.argmax(1)):.0%}"


def versions():
    from importlib.metadata import PackageNotFoundError, version
    out = []
    for pkg in ("onnxruntime", "onnx", "tensorflow-cpu", "torch", "executorch"):
        try:
            out.append(f"{pkg} {version(pkg)}")
        except PackageNotFoundError:
            pass
    return ", ".join(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--data", default=os.path.join(ROOT, "bench", "out", "data"))
    p.add_argument("--runs", type=int, default=200, help="timed runs per system and round")
    p.add_argument("--rounds", type=int, default=3, help="alternations; the median of the rounds' medians")
    p.add_argument("--cases", default=",".join(f"{w}/{c}" for w, c in CASES), help="WORKLOAD/CASE,...")
    a = p.parse_args()
    cases = [tuple(c.split("/")) for c in a.cases.split(",")]
    rows, notes = [], []
    with tempfile.TemporaryDirectory() as work:
        built = {}
        for workload, case in cases:
            data = os.path.join(a.data, workload)
            weights = read_weights(os.path.join(data, "weights.safetensors"))
            folder = os.path.join(data, case)
            files = {f[:-4]: os.path.join(folder, f) for f in sorted(os.listdir(folder)) if f.endswith(".npy")}
            arrays = {k: np.load(v) for k, v in files.items()}
            print(f"{workload}/{case}: building the models", file=sys.stderr, flush=True)
            if workload not in built:
                wdir = tempfile.mkdtemp(dir=work)
                built[workload] = {"ours": Ours(a.build, workload, data, wdir)}
                for system, make in (("ONNX Runtime", lambda: onnx_models(workload, weights, wdir)),
                                     ("TFLite", lambda: tflite_models(workload, weights, wdir)),
                                     ("ExecuTorch", None)):
                    if make is None:
                        continue
                    try:
                        built[workload][system] = make()
                    except Exception as e:  # noqa: BLE001
                        built[workload][system] = Unavailable(short(e))
            sys_models = dict(built[workload])
            try:   # ExecuTorch exports per case: its loops are unrolled to the case's length
                sys_models["ExecuTorch"] = executorch_models(workload, weights, arrays)
            except Exception as e:  # noqa: BLE001
                sys_models["ExecuTorch"] = e if isinstance(e, Unavailable) else Unavailable(short(e))
            ours = sys_models["ours"]
            # Outputs once, before any timing.
            outs = {("ours", s): ours.outputs(s, files, work) for s in ("f32",) + SCHEMES}
            timed = [("ours", s) for s in ("f32",) + SCHEMES]
            for system in SYSTEMS[1:]:
                models = sys_models[system]
                if isinstance(models, Unavailable):
                    continue
                for scheme, m in models.items():
                    if isinstance(m, Unavailable):
                        continue
                    try:
                        outs[(system, scheme)] = m[0](arrays)
                        timed.append((system, scheme))
                    except Exception as e:  # noqa: BLE001
                        models[scheme] = Unavailable(f"run failed: {short(e)}")
                if (system, "f32") in outs:
                    agree = agreement(workload, outs[(system, "f32")], outs[("ours", "f32")])
                    notes.append(f"{workload}/{case} {system} f32 against ours f32: max rel err "
                                 f"{max_rel_err(outs[(system, 'f32')], outs[('ours', 'f32')]):.1e}"
                                 + (f", {agree}" if agree else ""))
            rounds = {k: [] for k in timed}
            print(f"{workload}/{case}: timing {len(timed)} models", file=sys.stderr, flush=True)
            for _ in range(a.rounds):
                for system, scheme in timed:
                    if system == "ours":
                        t = ours.median(scheme, files, a.runs)
                    else:
                        t = peer_median(sys_models[system][scheme][0], arrays, a.runs)
                    rounds[(system, scheme)].append(t)
            med = {k: float(np.median(v)) for k, v in rounds.items()}
            for scheme in SCHEMES:
                for system in SYSTEMS:
                    models = sys_models[system]
                    m = models if isinstance(models, Unavailable) else (
                        ours.quantized[scheme] if system == "ours" else models.get(scheme))
                    f32 = f"{med[(system, 'f32')]:.3f}" if (system, "f32") in med else ""
                    if isinstance(m, Unavailable):
                        rows.append(f"| {workload} | {case} | {scheme} | {system} | {f32} | | | | | {m} | |")
                        continue
                    q = med[(system, scheme)]
                    what = m if system == "ours" else m[1]
                    err = max_rel_err(outs[(system, scheme)], outs[(system, "f32")])
                    agree = agreement(workload, outs[(system, scheme)], outs[(system, "f32")])
                    ratio = "" if system == "ours" else f"{q / med[('ours', scheme)]:.2f}"
                    rows.append(f"| {workload} | {case} | {scheme} | {system} | {f32} | {q:.3f} | "
                                f"{med[(system, 'f32')] / q:.2f} | {err:.2e} | {agree} | {what} | {ratio} |")
    print("| workload | case | scheme | system | f32 ms | quantized ms | × own f32 | max rel err vs own f32 "
          "| agreement | dense/conv weights quantized | peer q / ours q |")
    print("|---|---|---|---|---:|---:|---:|---:|---|---|---:|")
    print("\n".join(rows))
    print()
    print(f"- one thread; {a.rounds} rounds of {a.runs} timed runs per model, models in alternation; "
          f"medians of the rounds' medians")
    print(f"- {versions()}")
    for n in notes:
        print(f"- {n}")


if __name__ == "__main__":
    main()
