"""End to end: quantized and half-precision weights (SPEC §13).

quantize/net.py (dense layers, an embedding table read by take) is compiled with
`--quantize S` for S in int8, int4, bf16, f16 and run by graph-run on random
inputs. Checked:
  - the outputs against eager mode's f32 outputs within the scheme's tolerance
    (max error relative to the largest output); top-1 agreement under int8
    (int8 and int4 dense layers quantize their activations per run: >= 95% of
    rows; with graph-run --weight-only-quant, f32 over the widened weights: all);
  - the file shrinks as the storage says (weights dominate the file), and the
    embedding table stays f32 without --quantize-embeddings;
  - --quantize-report lists each quantized weight with bytes before and after;
  - sg.weight(name, quantize=S) without --quantize: the graph computes what eager
    mode computes with the same dequantized values (f32 rounding tolerance);
  - a file whose header lacks the quantized-weights flag, or sets a flag bit no
    runtime knows, is refused on load (exit 2) with a message naming it;
  - quantize/conv_net.py (convolutions: SAME + bias + relu, VALID stride 2, SAME
    dilation 2 + bias + tanh): under --quantize int8 every convolution runs the
    quantized kernel (`quant:conv:` in graph-run --profile), under int4 and with
    --weight-only-quant the f32 one over the widened filter; within the tolerance of f32; with sg.weight(name,
    quantize=S) the graph computes what eager mode computes; int8 quantizes each
    image on its own, so a NaN in one image leaves the other images' outputs as they
    were and makes that image's NaN; weight-only differs from dynamic and stays
    within the tolerance.
"""

import os
import struct
import sys
import tempfile
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as lib  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "quantize")
STORAGES = ("int8", "int4", "bf16", "f16")
# Max |graph - f32| / max |f32| per storage (measured with this seed: int8 1.1e-2,
# int4 1.7e-1, bf16 2.8e-3, f16 3.1e-4, the same weight-only; the embedding table of
# 200 x 512 is quantized too).
TOLERANCE = {"int8": 2e-2, "int4": 2e-1, "bf16": 1e-2, "f16": 2e-3}
# The same for conv_net.py, four quantized layers deep (measured: int8 3.5e-2, weight-only
# 2.4e-2; int4 2.8e-1, weight-only 2.9e-1).
CONV_TOLERANCE = {"int8": 5e-2, "int4": 4e-1}
# Largest quantized file / f32 file (the weights are ~97% of the f32 file).
SIZE_RATIO = {"int8": 0.30, "int4": 0.20, "bf16": 0.55, "f16": 0.55}
BATCH = 64


def make_data(rng):
    weights = {
        "w1": (rng.standard_normal((48, 512)) / np.sqrt(48)).astype(np.float32),
        "b1": (0.1 * rng.standard_normal(512)).astype(np.float32),
        "emb": (0.5 * rng.standard_normal((200, 512))).astype(np.float32),
        "w2": (rng.standard_normal((512, 10)) / np.sqrt(512)).astype(np.float32),
        "b2": (0.1 * rng.standard_normal(10)).astype(np.float32),
    }
    inputs = {"x": rng.standard_normal((BATCH, 48)).astype(np.float32),
              "ids": rng.integers(0, 200, BATCH).astype(np.int32)}
    return weights, inputs


def eager(py_path, weights_path, inputs):
    import stagegraph as sg
    sg.load_weights(weights_path)
    module = lib.load_eager_module(py_path)
    return np.asarray(module.net(**inputs))


def graph_output(report, case, graph, inputs, work, extra_args=()):
    proc, out_dir = lib.run_graph(graph, None, inputs, work, extra_args)
    if proc.returncode != 0:
        report.fail(case, f"graph-run failed, {lib.describe_result(proc)}")
        return None
    return np.load(os.path.join(out_dir, "result.npy")) if os.path.exists(os.path.join(out_dir, "result.npy")) \
        else np.load(os.path.join(out_dir, os.listdir(out_dir)[0]))


def rel_error(a, b):
    return float(np.max(np.abs(a.astype(np.float64) - b)) / np.max(np.abs(b)))


def check_flags(report, graph, work):
    data = bytearray(open(graph, "rb").read())
    flags = struct.unpack_from("<I", data, 12)[0]
    report.check("flag set", flags & 2, f"header flags {flags} lack bit 1 (quantized weights)")
    for case, new_flags, expect in (("flag missing", flags & ~2, "quantized weights"),
                                    ("unknown flag", flags | 16, "does not know")):
        bad = bytearray(data)
        struct.pack_into("<I", bad, 12, new_flags)
        path = os.path.join(work, case.replace(" ", "_") + ".sgraph")
        open(path, "wb").write(bad)
        proc = lib.run_tool("graph-run", [path, "--input", f"x={work}/in/x.npy", "--input", f"ids={work}/in/ids.npy"])
        report.check(case, proc.returncode == 2 and expect in proc.stderr,
                     f"expected exit 2 naming '{expect}', {lib.describe_result(proc)}")


def make_conv_data(rng):
    weights = {
        "k1": (rng.standard_normal((3, 3, 3, 8)) / np.sqrt(27)).astype(np.float32),
        "c1": (0.1 * rng.standard_normal(8)).astype(np.float32),
        "k2": (rng.standard_normal((3, 3, 8, 16)) / np.sqrt(72)).astype(np.float32),
        "k3": (rng.standard_normal((2, 2, 16, 32)) / np.sqrt(64)).astype(np.float32),
        "c3": (0.1 * rng.standard_normal(32)).astype(np.float32),
        "w": (rng.standard_normal((800, 10)) / np.sqrt(800)).astype(np.float32),
        "b": (0.1 * rng.standard_normal(10)).astype(np.float32),
    }
    return weights, {"x": rng.standard_normal((4, 12, 12, 3)).astype(np.float32)}


def conv_kernels(graph, inputs, work, extra_args=()):
    """The kernel names graph-run --profile gives the conv2d and conv2d_bias nodes."""
    proc, _ = lib.run_graph(graph, None, inputs, work, ["--profile", *extra_args])
    return [line.split()[3] for line in proc.stdout.splitlines()
            if len(line.split()) > 3 and line.split()[2] in ("conv2d", "conv2d_bias")]


def check_convolutions(report, rng, work):
    weights, inputs = make_conv_data(rng)
    wpath = os.path.join(work, "conv_weights.safetensors")
    lib.write_safetensors(wpath, weights)
    template = open(os.path.join(HERE, "conv_net.py")).read()
    plain = os.path.join(work, "conv_plain.py")
    open(plain, "w").write(template.replace("QUANTIZE", ""))
    ref = eager(plain, wpath, inputs).astype(np.float64)
    nan_inputs = {"x": inputs["x"].copy()}
    nan_inputs["x"][2, 5, 7, 1] = np.nan
    for storage in ("int8", "int4"):
        case = f"conv {storage}"
        graph = os.path.join(work, f"conv_{storage}.sgraph")
        lib.compile_program(plain, graph, ["--weights", wpath, "--quantize", storage])
        kernels = conv_kernels(graph, inputs, os.path.join(work, f"conv_{storage}_profile"))
        quantized = storage == "int8"  # int4 filters are widened (kernels/quant/quantized_kernels.cc)
        report.check(f"{case} kernels",
                     len(kernels) == 3 and all(k.startswith("quant:conv:") == quantized for k in kernels),
                     f"conv nodes ran {kernels}", ", ".join(kernels))
        # Weight-only: the f32 convolution over the widened filter.
        kernels = conv_kernels(graph, inputs, os.path.join(work, f"conv_{storage}_wo_profile"), ["--weight-only-quant"])
        report.check(f"{case} weight-only kernels",
                     len(kernels) == 3 and not any(k.startswith("quant:") for k in kernels),
                     f"conv nodes ran {kernels}", ", ".join(kernels))
        out = graph_output(report, case, graph, inputs, os.path.join(work, f"conv_{storage}"))
        wo = graph_output(report, f"{case} weight-only", graph, inputs, os.path.join(work, f"conv_{storage}_wo"),
                          ["--weight-only-quant"])
        nan = graph_output(report, f"{case} NaN", graph, nan_inputs, os.path.join(work, f"conv_{storage}_nan"))
        if out is None or wo is None or nan is None:
            continue
        err, err_wo = rel_error(out, ref), rel_error(wo, ref)
        report.check(f"{case} vs f32", err <= CONV_TOLERANCE[storage], f"max relative error {err:.3g}",
                     f"max relative error {err:.3g}")
        # int4 has a dynamic dense layer (the last): weight-only differs there too.
        report.check(f"{case} weight-only vs f32", err_wo <= CONV_TOLERANCE[storage] and not np.array_equal(wo, out),
                     f"max relative error {err_wo:.3g}, equal to dynamic: {np.array_equal(wo, out)}",
                     f"max relative error {err_wo:.3g}")
        # Each image quantized on its own (int8; an f32 convolution with a NaN input may
        # run another kernel for the whole batch, so int4 checks only the NaN).
        others = [0, 1, 3] if quantized else []
        report.check(f"{case} NaN stays in its image",
                     np.array_equal(nan[others], out[others]) and np.all(np.isnan(nan[2])),
                     f"other images changed: {not np.array_equal(nan[others], out[others])}, "
                     f"image 2 NaN: {np.all(np.isnan(nan[2]))}")
        # sg.weight(name, quantize=S): the graph computes what eager mode computes.
        src = os.path.join(work, f"conv_override_{storage}.py")
        open(src, "w").write(template.replace("QUANTIZE", f', quantize="{storage}"'))
        graph = src[:-3] + ".sgraph"
        lib.compile_program(src, graph, ["--weights", wpath])
        expected = eager(src, wpath, inputs).astype(np.float64)
        got = graph_output(report, f"{case} override", graph, inputs, os.path.join(work, f"conv_o_{storage}"))
        if got is not None:
            err = rel_error(got, expected)
            report.check(f"{case} override graph vs eager", err <= 1e-5, f"max relative error {err:.3g}",
                         f"max relative error {err:.3g}, vs f32 {rel_error(got, ref):.3g}")


def main():
    report = lib.Report("quantize")
    rng = np.random.default_rng(37)
    weights, inputs = make_data(rng)
    with tempfile.TemporaryDirectory() as work:
        wpath = os.path.join(work, "weights.safetensors")
        lib.write_safetensors(wpath, weights)
        net = os.path.join(HERE, "net.py")
        ref = eager(net, wpath, inputs).astype(np.float64)
        f32_graph = os.path.join(work, "f32.sgraph")
        lib.compile_program(net, f32_graph, ["--weights", wpath])
        f32_size = os.path.getsize(f32_graph)
        for storage in STORAGES:
            graph = os.path.join(work, f"{storage}.sgraph")
            proc = lib.compile_program(net, graph, ["--weights", wpath, "--quantize", storage,
                                                    "--quantize-embeddings", "--quantize-report"])
            rows = {line.split()[0]: line.split() for line in proc.stdout.splitlines() if line.strip()}
            report.check(f"{storage} report", all(w in rows for w in ("w1", "w2", "emb")) and "b1" not in rows,
                         f"--quantize-report should list w1, w2, emb (not b1):\n{proc.stdout}")
            out = graph_output(report, storage, graph, inputs, os.path.join(work, storage))
            if out is None:
                continue
            err = rel_error(out, ref)
            report.check(f"{storage} vs f32", err <= TOLERANCE[storage],
                         f"max relative error {err:.3g} > {TOLERANCE[storage]}", f"max relative error {err:.3g}")
            if storage == "int8":
                agree = float(np.mean(out.argmax(1) == ref.argmax(1)))
                report.check("int8 top-1", agree >= 0.95, f"top-1 agrees on {agree:.1%} of rows",
                             f"top-1 agrees on {agree:.1%} of rows")
                check_flags(report, graph, os.path.join(work, storage))
            if storage in ("int8", "int4"):
                wo = graph_output(report, f"{storage} weight-only", graph, inputs,
                                  os.path.join(work, storage + "_wo"), ["--weight-only-quant"])
                if wo is not None:
                    err_wo = rel_error(wo, ref)
                    report.check(f"{storage} weight-only vs f32", err_wo <= TOLERANCE[storage],
                                 f"max relative error {err_wo:.3g}", f"max relative error {err_wo:.3g}")
                    report.check(f"{storage} dynamic differs from weight-only", not np.array_equal(wo, out),
                                 "--weight-only-quant changed nothing")
                    if storage == "int8":
                        agree = float(np.mean(wo.argmax(1) == ref.argmax(1)))
                        report.check("int8 weight-only top-1", agree == 1.0, f"top-1 agrees on {agree:.1%} of rows")
            ratio = os.path.getsize(graph) / f32_size
            report.check(f"{storage} size", ratio <= SIZE_RATIO[storage], f"file {ratio:.3f} of f32's",
                         f"{ratio:.3f} of f32's")
        # Without --quantize-embeddings the table stays f32.
        graph = os.path.join(work, "int8_dense.sgraph")
        proc = lib.compile_program(net, graph, ["--weights", wpath, "--quantize", "int8", "--quantize-report"])
        report.check("embeddings stay f32", "emb" not in proc.stdout and "w1" in proc.stdout, proc.stdout)
        # Per-weight storage: graph == eager with the same dequantized values.
        template = open(os.path.join(HERE, "net_override.py")).read()
        for w1, emb in (("int8", "int4"), ("int4", "int8"), ("bf16", "f16")):
            src = os.path.join(work, f"override_{w1}_{emb}.py")
            open(src, "w").write(template.replace("QUANTIZE_W1", w1).replace("QUANTIZE_EMB", emb))
            graph = src[:-3] + ".sgraph"
            lib.compile_program(src, graph, ["--weights", wpath])
            expected = eager(src, wpath, inputs).astype(np.float64)
            out = graph_output(report, f"override {w1}/{emb}", graph, inputs, os.path.join(work, f"o_{w1}"))
            if out is None:
                continue
            err = rel_error(out, expected)
            report.check(f"override {w1}/{emb} graph vs eager", err <= 1e-5, f"max relative error {err:.3g}",
                         f"max relative error {err:.3g}, vs f32 {rel_error(out, ref):.3g}")
            ratio = os.path.getsize(graph) / f32_size
            report.check(f"override {w1}/{emb} stored", ratio <= 0.55, f"file {ratio:.3f} of f32's: not quantized?",
                         f"{ratio:.3f} of f32's")
        check_convolutions(report, rng, work)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
