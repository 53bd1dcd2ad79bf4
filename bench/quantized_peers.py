"""Quantized models beside the peers' quantized models of the same networks, one
thread, each beside its own f32 model, timed in alternation (BENCHMARKS.md's method):

- ours: `graph-compile --quantize int8` (per output channel) and `--quantize int4`
  (blocks of 32), activations quantized per row at each run; `graph-run --bench`.
- ONNX Runtime: `quantize_dynamic` (QInt8 weights per channel, activations quantized
  per run: DynamicQuantizeLinear + MatMulInteger / ConvInteger) for int8; for int4
  each MatMul with a constant 2-D weight rewritten as com.microsoft MatMulNBits (4
  bits, blocks of 32, symmetric, packed by onnxruntime's own quantize_matmul_4bits,
  accuracy_level 4: int8 activations, as ours), what MatMulNBitsQuantizer writes with
  those settings (that class needs the onnx_ir package, which onnxruntime does not
  require).
- TensorFlow Lite: the f32 peer's SavedModel converted again with
  `optimizations = [tf.lite.Optimize.DEFAULT]` and no representative dataset
  (dynamic range: int8 weights, activations quantized per run); int8 only.
- ExecuTorch: XNNPACK exports (to_edge_transform_and_lower) of the network as a
  torch module, loops unrolled to the case's length: f32; dynamic int8 per channel
  (XNNPACKQuantizer, is_dynamic=True); int8 activations with int4 weights in groups
  of 32 (torchao's Int8DynamicActivationIntxWeightConfig), run by executorch.runtime
  in a worker process, where the `executorch` package imports; otherwise one row per
  case and scheme says why.

    bench/.venv/bin/python bench/quantized_peers.py [--build build] [--runs 200] [--rounds 3]
        [--cases mlp/b1,rnn/t100] [--data bench/out/data] [--write]

Needs bench/.venv (bench/compare makes it: numpy, onnx, onnxruntime, tensorflow-cpu,
safetensors; torch and executorch for the ExecuTorch rows) and bench/out/data
(bench/models/data.py). Prints one Markdown table: per case, scheme and system, the
system's f32 and quantized medians (each the median of the rounds' medians), the
quantized model's max relative error against the same system's f32 outputs (float
outputs; beam's token checksum and mlp/cnn top-1 beside it), how many dense and
convolution weights the quantized file holds quantized, and `peer q / ours q`: the
peer's quantized median over ours at the same scheme (> 1: ours is faster). Above
the table the machine, commit, command and load; below it each peer's f32 outputs
against ours (the same networks) and, per scheme, whether ours is ahead of every
peer's quantized model. --write puts the whole section in bench/RESULTS.md under its
heading (replacing the previous one).
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
import common  # noqa: E402
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
    quantize_matmul_4bits: what MatMulNBitsQuantizer(block_size=32, is_symmetric=True,
    accuracy_level=4) writes, without its onnx_ir dependency."""
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


def tflite_load(path, what):
    """(run, what, invoke): run sets the inputs (resizing them), invokes and reads the
    outputs; the timing calls Interpreter.invoke alone on the inputs the check's run set
    (the same inputs every run, as graph-run --bench)."""
    import tensorflow as tf
    interpreter = tf.lite.Interpreter(model_path=path, num_threads=1)
    runner = interpreter.get_signature_runner("serving_default")
    in_index = {n: d["index"] for n, d in runner.get_input_details().items()}
    out_index = {n: d["index"] for n, d in runner.get_output_details().items()}

    def run(inputs):
        for name, value in inputs.items():
            interpreter.resize_tensor_input(in_index[name], list(value.shape))
        interpreter.allocate_tensors()
        for name, value in inputs.items():
            interpreter.set_tensor(in_index[name], value)
        interpreter.invoke()
        return {n: interpreter.get_tensor(i) for n, i in out_index.items()}
    return run, what, interpreter.invoke


def tflite_models(workload, weights, work):
    import tensorflow as tf
    folder = os.path.join(work, f"tflite_{workload}")
    os.makedirs(folder)
    f32 = tflite_peer.build(workload, weights, folder)   # also writes folder/WORKLOAD.savedmodel
    runners = {"f32": tflite_load(f32, "")}
    try:
        converter = tf.lite.TFLiteConverter.from_saved_model(os.path.join(folder, f"{workload}.savedmodel"))
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
        converter.optimizations = [tf.lite.Optimize.DEFAULT]   # no representative dataset: dynamic range
        int8 = os.path.join(folder, f"{workload}_dynamic_range.tflite")
        with open(int8, "wb") as f:
            f.write(converter.convert())
        runners["int8"] = tflite_load(int8, tflite_dense_count(int8))
    except Exception as e:  # noqa: BLE001
        runners["int8"] = Unavailable(f"dynamic-range conversion failed: {short(e)}")
    runners["int4"] = Unavailable("no int4 dynamic-range scheme in TFLiteConverter")
    return runners


# ---------------------------------------------------------------- ExecuTorch

def _torch_module(workload, weights, arrays):
    """The network as a torch.nn.Module over the same weights, for torch.export:
    loops unrolled at export to the case's length (rnn's T = 100 rows of xs, beam's
    `steps` = 50), the end-of-sequence test as torch.where."""
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
                h = torch.tanh(self.w(torch.index_select(self.emb, 0, tok.reshape(1))) + self.u(h))
                logits = self.v(h).reshape(1000)
                nxt = torch.argmax(logits)
                score = score + torch.max(logits)
                tok = torch.where(nxt == 1, start, nxt)
                check = (check * 31 + tok) % 1000003
            return tok, score, check

    return {"mlp": Mlp, "cnn": Cnn, "rnn": lambda: Rnn(len(arrays["xs"])),
            "beam": lambda: Beam(int(arrays["steps"]))}[workload]().eval()


def _count_quantized(graph_module, module):
    """'quantized of all': the weights that linear and convolution nodes read through
    a dequantize (traced back to their parameter, once however many unrolled steps
    read them), against the module's Linear and Conv2d layers."""
    import torch
    total = sum(isinstance(m, (torch.nn.Linear, torch.nn.Conv2d)) for m in module.modules())
    weights = set()
    for node in graph_module.graph.nodes:
        if node.op != "call_function" or not any(k in str(node.target) for k in ("linear", "conv")):
            continue
        w = node.args[1] if len(node.args) > 1 else None
        if getattr(w, "op", "") != "call_function" or "dequantize" not in str(w.target):
            continue
        while getattr(w, "op", "") == "call_function" and w.args:
            w = w.args[0]
        weights.add(getattr(w, "target", str(w)))
    return f"{len(weights)} of {total}"


def executorch_models(workload, weights, case_arrays, work):
    """{scheme: (run, what) or Unavailable}: XNNPACK-lowered .pte files loaded by the
    executorch.runtime Python API, its thread pool reset to one thread."""
    try:
        import torch
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
        from executorch.exir import to_edge_transform_and_lower
        from executorch.extension.pybindings.portable_lib import _unsafe_reset_threadpool
        from executorch.runtime import Runtime
    except Exception as e:  # noqa: BLE001
        raise Unavailable(f"not importable in this Python ({short(e)})")
    torch.set_num_threads(1)
    _unsafe_reset_threadpool(1)
    if workload == "beam":
        example = (torch.tensor(int(case_arrays["start"])),)
        outputs = ["token", "score", "check"]
    else:
        example = tuple(torch.from_numpy(case_arrays[n]) for n in case_arrays)
        outputs = ["output_0"]
    runtime = Runtime.get()

    def lower(exported, scheme, what):
        program = to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()]).to_executorch()
        pte = os.path.join(work, f"executorch_{workload}_{scheme}.pte")
        with open(pte, "wb") as f:
            f.write(program.buffer)
        loaded = runtime.load_program(pte)
        method = loaded.load_method("forward")
        args = list(example)

        def run(_inputs, keep=(loaded, method)):
            return dict(zip(outputs, (o.numpy() for o in keep[1].execute(args))))
        return run, f"{what}{', ' if what else ''}.pte {os.path.getsize(pte):,} B"

    module = _torch_module(workload, weights, case_arrays)
    runners = {"f32": lower(torch.export.export(module, example), "f32", "")}
    try:   # dynamic int8: XNNPACKQuantizer's symmetric per-channel config, is_dynamic=True
        from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (XNNPACKQuantizer,
                                                                             get_symmetric_quantization_config)
        try:
            from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
        except ImportError:
            from torch.ao.quantization.quantize_pt2e import convert_pt2e, prepare_pt2e
        quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True,
                                                                                     is_dynamic=True))
        prepared = prepare_pt2e(torch.export.export(module, example).module(), quantizer)
        prepared(*example)
        converted = convert_pt2e(prepared)
        runners["int8"] = lower(torch.export.export(converted, example), "int8",
                                _count_quantized(converted, module))
    except Exception as e:  # noqa: BLE001
        runners["int8"] = Unavailable(f"dynamic int8 export failed: {short(e)}")
    try:   # int8 activations per token, int4 weights in groups of 32 (torchao, as ExecuTorch's XNNPACK docs)
        from torchao.quantization import Int8DynamicActivationIntxWeightConfig, quantize_
        from torchao.quantization.granularity import PerGroup
        module4 = _torch_module(workload, weights, case_arrays)
        # Linear layers only (torchao's config), and only where K is a multiple of 32:
        # XNNPACK's delegate takes int4 groups that are multiples of 32 (mlp's 784 is not).
        quantize_(module4, Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int4,
                                                                 weight_granularity=PerGroup(32)),
                  filter_fn=lambda m, _: isinstance(m, torch.nn.Linear) and m.in_features % 32 == 0)
        exported = torch.export.export(module4, example)
        runners["int4"] = lower(exported, "int4", _count_quantized(exported.graph_module, module4))
    except Exception as e:  # noqa: BLE001
        runners["int4"] = Unavailable(f"int4 export failed: {short(e)}")
    return runners


def executorch_worker(workload, case_dir, work):
    """The ExecuTorch models in a process of their own (TensorFlow and ExecuTorch each
    bring LLVM: both in one process abort with "Option ... registered more than once").
    Replies on stdout after "@@ ": the schemes, then one median per "time SCHEME RUNS"."""
    import json
    weights = read_weights(os.path.join(os.path.dirname(case_dir), "weights.safetensors"))
    arrays = {f[:-4]: np.load(os.path.join(case_dir, f)) for f in sorted(os.listdir(case_dir)) if f.endswith(".npy")}
    try:
        models = executorch_models(workload, weights, arrays, work)
    except Unavailable as e:
        print("@@ " + json.dumps({"unavailable": str(e)}), flush=True)
        return
    reply = {}
    for scheme, m in models.items():
        if isinstance(m, Unavailable):
            reply[scheme] = {"unavailable": str(m)}
            continue
        np.savez(os.path.join(work, f"executorch_{scheme}.npz"), **m[0](arrays))
        reply[scheme] = {"what": m[1]}
    print("@@ " + json.dumps(reply), flush=True)
    for line in sys.stdin:
        _, scheme, runs = line.split()
        run = models[scheme][0]
        print("@@ " + json.dumps(peer_median(lambda: run(arrays), int(runs))), flush=True)


class ExecuTorchPeer:
    """The parent's side of executorch_worker."""

    def __init__(self, workload, case_dir, work):
        import json
        self.json, self.work = json, tempfile.mkdtemp(dir=work)
        self.log = open(os.path.join(self.work, "log.txt"), "w+")
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--executorch-worker", workload,
                                      case_dir, self.work], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, text=True)
        reply = self._reply()
        if "unavailable" in reply:
            raise Unavailable(reply["unavailable"])
        self.models = {}
        for scheme, r in reply.items():
            if "unavailable" in r:
                self.models[scheme] = Unavailable(r["unavailable"])
            else:
                outs = dict(np.load(os.path.join(self.work, f"executorch_{scheme}.npz")))
                self.models[scheme] = (lambda _inputs, o=outs: o, r["what"],
                                       lambda runs, s=scheme: self.median(s, runs))

    def _reply(self):
        for line in self.proc.stdout:
            if line.startswith("@@ "):
                return self.json.loads(line[3:])
        self.log.seek(0)
        tail = [l for l in self.log.read().splitlines() if l.strip()][-1:] or ["no output"]
        raise Unavailable(f"worker exited {self.proc.wait()}: {short(Exception(tail[0]))}")

    def median(self, scheme, runs):
        self.proc.stdin.write(f"time {scheme} {runs}\n")
        self.proc.stdin.flush()
        return self._reply()

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()


# ---------------------------------------------------------------- timing and checks

def peer_median(call, runs):
    """5 untimed calls, then `runs` timed one by one: the median in ms."""
    for _ in range(5):
        call()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        call()
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


HEADING = "## Quantized models beside the peers' quantized models (bench/quantized_peers.py)"


def machine():
    model, flags = "", set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and not model:
                model = line.split(":", 1)[1].strip()
            elif line.startswith("flags") and not flags:
                flags = set(line.split(":", 1)[1].split())
    isa = [f for f in ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16", "amx_int8") if f in flags]
    return f"{model or 'unknown'} ({os.cpu_count()} logical CPUs; {', '.join(isa) or 'no AVX2'})"


def commit():
    def git(*args):
        return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True).stdout.strip()
    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + (" (with uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") else "")


def timer(model, arrays):
    """runs -> median ms for an in-process peer model (run, what[, call])."""
    call = model[2] if len(model) > 2 else (lambda: model[0](arrays))
    return lambda runs: peer_median(call, runs)


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--executorch-worker":
        executorch_worker(*sys.argv[2:])
        return
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--data", default=os.path.join(ROOT, "bench", "out", "data"))
    p.add_argument("--runs", type=int, default=200, help="timed runs per system and round")
    p.add_argument("--rounds", type=int, default=3, help="alternations; the median of the rounds' medians")
    p.add_argument("--write", action="store_true", help="put the section in bench/RESULTS.md under its heading")
    p.add_argument("--cases", default=",".join(f"{w}/{c}" for w, c in CASES), help="WORKLOAD/CASE,...")
    a = p.parse_args()
    cases = [tuple(c.split("/")) for c in a.cases.split(",")]
    rows, notes, ratios = [], [], []
    started, load_before = time.time(), os.getloadavg()
    python = sys.executable
    if "/bench/.venv/" in python or "/bench/out/" in python:   # another checkout's or this one's venv
        python = "bench/" + python.split("/bench/", 1)[1]
    command = " ".join([python, "bench/quantized_peers.py"] + sys.argv[1:])
    with tempfile.TemporaryDirectory() as work:
        built = {}
        for workload, case in cases:
            data = os.path.join(a.data, workload)
            weights = read_weights(os.path.join(data, "weights.safetensors"))
            folder = os.path.join(data, case)
            files = {f[:-4]: os.path.join(folder, f) for f in sorted(os.listdir(folder)) if f.endswith(".npy")}
            arrays = {k: np.load(v) for k, v in files.items()}
            print(f"{workload}/{case}: building the models", file=sys.stderr, flush=True)
            executorch = None
            try:   # exported per case (its loops are unrolled to the case's length), in a process of its own
                executorch = ExecuTorchPeer(workload, folder, work)
            except Exception as e:  # noqa: BLE001
                executorch = e if isinstance(e, Unavailable) else Unavailable(short(e))
            if workload not in built:
                wdir = tempfile.mkdtemp(dir=work)
                built[workload] = {"ours": Ours(a.build, workload, data, wdir)}
                for system, make in (("ONNX Runtime", onnx_models), ("TFLite", tflite_models)):
                    try:
                        built[workload][system] = make(workload, weights, wdir)
                    except Exception as e:  # noqa: BLE001
                        built[workload][system] = Unavailable(short(e))
            # Each peer model as (outputs of a run, what is quantized, runs -> median ms).
            sys_models = {"ExecuTorch": executorch if isinstance(executorch, Unavailable) else executorch.models}
            for system in ("ONNX Runtime", "TFLite"):
                models = built[workload][system]
                sys_models[system] = models if isinstance(models, Unavailable) else {
                    k: m if isinstance(m, Unavailable) else (m[0], m[1], timer(m, arrays)) for k, m in models.items()}
            ours = built[workload]["ours"]
            # Outputs once, before any timing.
            outs = {("ours", s): ours.outputs(s, files, work) for s in ("f32",) + SCHEMES}
            timed = {("ours", s): lambda runs, s=s: ours.median(s, files, runs) for s in ("f32",) + SCHEMES}
            for system in SYSTEMS[1:]:
                models = sys_models[system]
                if isinstance(models, Unavailable):
                    continue
                for scheme, m in models.items():
                    if isinstance(m, Unavailable):
                        continue
                    try:
                        outs[(system, scheme)] = m[0](arrays)
                        timed[(system, scheme)] = m[2]
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
                for key, median in list(timed.items()):
                    try:
                        rounds[key].append(median(a.runs))
                    except Exception as e:  # noqa: BLE001 (a peer's worker that died: its row says so)
                        if key[0] == "ours":
                            raise
                        del timed[key], rounds[key]
                        sys_models[key[0]][key[1]] = Unavailable(f"timing failed: {short(e)}")
            if not isinstance(executorch, Unavailable):
                executorch.close()
            med = {k: float(np.median(v)) for k, v in rounds.items()}
            for scheme in SCHEMES:
                for system in SYSTEMS:
                    models = sys_models.get(system)
                    m = models if isinstance(models, Unavailable) else (
                        ours.quantized[scheme] if system == "ours" else models.get(scheme))
                    f32 = f"{med[(system, 'f32')]:.3f}" if (system, "f32") in med else ""
                    if isinstance(m, Unavailable):
                        rows.append(f"| {workload} | {case} | {scheme} | {system} | {f32} | | | | | {m} | |")
                        continue
                    if (system, scheme) not in med or (system, "f32") not in med:
                        reason = models.get("f32") if (system, "f32") not in med else m
                        rows.append(f"| {workload} | {case} | {scheme} | {system} | {f32} | | | | | {reason} | |")
                        continue
                    q = med[(system, scheme)]
                    what = m if system == "ours" else m[1]
                    err = max_rel_err(outs[(system, scheme)], outs[(system, "f32")])
                    agree = agreement(workload, outs[(system, scheme)], outs[(system, "f32")])
                    ratio = "" if system == "ours" else f"{q / med[('ours', scheme)]:.2f}"
                    if system != "ours":
                        ratios.append((f"{workload}/{case}", scheme, system, q / med[("ours", scheme)]))
                    rows.append(f"| {workload} | {case} | {scheme} | {system} | {f32} | {q:.3f} | "
                                f"{med[(system, 'f32')] / q:.2f} | {err:.2e} | {agree} | {what} | {ratio} |")
    load_after = os.getloadavg()
    lines = [HEADING, "",
             f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))}",
             f"- CPU: {machine()}",
             f"- commit: {commit()}",
             f"- command: `{command}`",
             f"- one thread; {a.rounds} rounds of {a.runs} timed runs per model, the models of a case in "
             f"alternation; medians of the rounds' medians",
             f"- load average (1/5/15 min) before: {'/'.join(f'{x:.1f}' for x in load_before)}, after: "
             f"{'/'.join(f'{x:.1f}' for x in load_after)}",
             f"- {versions()}",
             "",
             "Ours: `graph-run --bench` (its median, in C++). Peers: timed in this Python process through "
             "their Python call (ONNX Runtime `InferenceSession.run`, ExecuTorch `Method.execute` in a worker "
             "process), TFLite through `Interpreter.invoke` alone; the call's own cost is in the peer's figure "
             "(its size: section *Python per-call overhead*), which weighs on the shortest cases (mlp b1). "
             "`peer q / ours q` > 1: ours is faster at that scheme; a peer's row times what its tool "
             "quantized (the column before it).",
             "",
             "| workload | case | scheme | system | f32 ms | quantized ms | × own f32 | max rel err vs own f32 "
             "| agreement | dense/conv weights quantized | peer q / ours q |",
             "|---|---|---|---|---:|---:|---:|---:|---|---|---:|"] + rows + [""]
    lines += [f"- {n}" for n in notes]
    for scheme in SCHEMES:
        behind = [f"{system} on {case} ({r:.2f})" for case, sc, system, r in ratios if sc == scheme and r <= 1]
        measured = sorted({system for case, sc, system, r in ratios if sc == scheme})
        lines.append(f"- ahead of every peer's quantized model at {scheme} ({', '.join(measured) or 'no peer'} "
                     f"measured): " + ("yes, on every case of this run" if measured and not behind else
                                       "not measured" if not measured else "no; not ahead of " + ", ".join(behind)))
    text = "\n".join(lines) + "\n"
    print(text)
    if a.write:
        common.write_results_section(HEADING, text)


if __name__ == "__main__":
    main()
