"""Per-call overhead of the Python binding (SPEC §14) on a one-node graph, beside
the C++ API and the peers' Python APIs on the same graph (relu of f32[16]):

  ours, C++     Session set_input + run + output (bench/python/overhead_probe.cc)
  ours, Python  session.run("relu", x) and a kept entry callable f(x)
  ONNX Runtime  InferenceSession.run(None, {"x": x})
  TFLite        Interpreter set_tensor + invoke + get_tensor, and invoke alone
  ExecuTorch    Method.execute([x]), where the executorch package is installed

    build/venv-py/bin/python bench/python/overhead.py [--build build] [--write]

Run with the Python that has the wheel (make python-wheel: build/venv-py); the
peers run in bench/.venv (bench/compare makes it; --peer-python to choose another).
Each figure is the median over REPEATS timings of CALLS calls, in microseconds.
--write puts the table in bench/RESULTS.md under its own heading."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
import common  # noqa: E402  (bench/RESULTS.md's sections)
N = 16
SOURCE = f"""
import stagegraph as sg

@sg.function
def relu(x: sg.f32[{N}]):
    return sg.relu(x)
"""
HEADING = "## Python per-call overhead (bench/python/overhead.py)"


def median_us(f, calls, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            f()
        times.append((time.perf_counter_ns() - t0) / calls / 1000.0)
    times.sort()
    return times[len(times) // 2]


def peers(which, calls, repeats):
    """Runs in the peers' venv, one peer per process (TensorFlow and PyTorch load
    clashing LLVMs): prints {name: us}."""
    import numpy as np
    x = np.full(N, 0.5, np.float32)
    out = {}
    tmp = tempfile.mkdtemp()
    if which == "onnx":
        try:
            import onnx
            import onnxruntime as ort
            from onnx import TensorProto, helper
            g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [N])])
            model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = 1
            opts.inter_op_num_threads = 1
            sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
            feed = {"x": x}
            sess.run(None, feed)
            out["ONNX Runtime InferenceSession.run"] = median_us(lambda: sess.run(None, feed), calls, repeats)
            out["ONNX Runtime version"] = ort.__version__
        except Exception as e:  # noqa: BLE001 - a missing peer is reported, not fatal
            out["ONNX Runtime error"] = repr(e)
    if which == "tflite":
        try:
            os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
            import tensorflow as tf

            @tf.function(input_signature=[tf.TensorSpec([N], tf.float32)])
            def relu(v):
                return tf.nn.relu(v)

            conv = tf.lite.TFLiteConverter.from_concrete_functions([relu.get_concrete_function()], relu)
            interp = tf.lite.Interpreter(model_content=conv.convert(), num_threads=1)
            interp.allocate_tensors()
            i = interp.get_input_details()[0]["index"]
            o = interp.get_output_details()[0]["index"]

            def call():
                interp.set_tensor(i, x)
                interp.invoke()
                return interp.get_tensor(o)

            call()
            out["TFLite set_tensor + invoke + get_tensor"] = median_us(call, calls, repeats)
            out["TFLite Interpreter.invoke"] = median_us(interp.invoke, calls, repeats)
            out["TFLite version"] = tf.__version__
        except Exception as e:  # noqa: BLE001
            out["TFLite error"] = repr(e)
    if which == "executorch":
        try:
            import torch
            from executorch.exir import to_edge
            from executorch.runtime import Runtime

            class Relu(torch.nn.Module):
                def forward(self, v):
                    return torch.relu(v)

            xt = torch.full((N,), 0.5)
            pte = os.path.join(tmp, "relu.pte")
            with open(pte, "wb") as f:
                f.write(to_edge(torch.export.export(Relu(), (xt,))).to_executorch().buffer)
            method = Runtime.get().load_program(pte).load_method("forward")
            method.execute([xt])
            out["ExecuTorch Method.execute"] = median_us(lambda: method.execute([xt]), calls, repeats)
            from importlib.metadata import version
            out["ExecuTorch version"] = f"{version('executorch')} (torch {torch.__version__})"
        except Exception as e:  # noqa: BLE001
            out["ExecuTorch error"] = f"{type(e).__name__}: {e}"
    print(json.dumps(out))


def ours(build, calls, repeats):
    import numpy as np

    import stagegraph as sg
    graph = os.path.join(tempfile.mkdtemp(), "relu.sgraph")
    import stagegraph._compiler as c
    r = c.compile_source("relu.py", SOURCE, [], "", 2, False, False)
    assert r.ok, r.text
    with open(graph, "wb") as f:
        f.write(r.graph)
    probe = os.path.join(build, "bench", "sg_python_overhead_probe")
    cpp = json.loads(subprocess.check_output([probe, graph, str(N), str(calls), str(repeats)]))
    s = sg.load(graph).session()
    x = np.full(N, 0.5, np.float32)
    f = s.relu
    assert np.array_equal(f(x), np.maximum(x, 0))
    res = {
        "C++ API: set_input + run + output": cpp["call_ns"] / 1000.0,
        "C++ API: run alone": cpp["run_ns"] / 1000.0,
        'Python: session.run("relu", x)': median_us(lambda: s.run("relu", x), calls, repeats),
        "Python: f(x), f = session.relu": median_us(lambda: f(x), calls, repeats),
        "Python: f(x=x)": median_us(lambda: f(x=x), calls, repeats),
    }
    return res


def table(ours_us, peer_us):
    base = ours_us["C++ API: set_input + run + output"]
    lines = ["| call (relu of f32[16], one thread) | µs per call | over our C++ API |", "|---|---:|---:|"]
    for k, v in ours_us.items():
        over = "" if k.startswith("C++") else f"+{v - base:.2f}"
        lines.append(f"| Stagegraph {k} | {v:.2f} | {over} |")
    notes = []
    for k, v in peer_us.items():
        if k.endswith("version"):
            notes.append(f"{k} {v}")
        elif k.endswith("error"):
            notes.append(f"{k[:-6]}: not measured ({v[:200]})")
        else:
            lines.append(f"| {k} | {v:.2f} | |")
    return "\n".join(lines), notes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--peer-python", default=os.path.join(ROOT, "bench", ".venv", "bin", "python"))
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--peer", choices=["onnx", "tflite", "executorch"], help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.peer:
        peers(a.peer, a.calls, a.repeats)
        return
    us = ours(a.build, a.calls, a.repeats)
    peer_us = {}
    for peer in ("onnx", "tflite", "executorch"):
        if not os.path.exists(a.peer_python):
            peer_us[f"{peer} error"] = f"no {a.peer_python} (bench/compare makes bench/.venv)"
            continue
        p = subprocess.run([a.peer_python, __file__, "--peer", peer, "--calls", str(a.calls), "--repeats", str(a.repeats)],
                           capture_output=True, text=True)
        if p.returncode == 0:
            peer_us.update(json.loads(p.stdout.strip().splitlines()[-1]))
        else:
            peer_us[f"{peer} error"] = p.stderr.strip()[-300:]
    body, notes = table(us, peer_us)
    import platform
    text = (f"{HEADING}\n\nThe Python binding's cost per call on a one-node graph, against the C++ API "
            f"doing the same (bind the input in place, run, take the output) and the peers' Python APIs on "
            f"the same graph. {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
            f"median of {a.repeats} x {a.calls} calls; `build/venv-py/bin/python bench/python/overhead.py --write`.\n\n"
            f"{body}\n")
    if notes:
        text += "\n" + "\n".join(f"- {n}" for n in notes) + "\n"
    print(text)
    if a.write:
        common.write_results_section(HEADING, text)


if __name__ == "__main__":
    main()
