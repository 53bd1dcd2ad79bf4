"""What every system under test shares: the workloads' file layout, the exception for
a workload a system cannot express, and the output comparison."""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
REPO = os.path.dirname(BENCH)
OUT = os.path.join(BENCH, "out")
DATA = os.path.join(OUT, "data")
MODELS = os.path.join(BENCH, "models")

WORKLOADS = ["mlp", "mlp_dynamic", "cnn", "cnn_dynamic", "rnn", "loop_overhead", "dispatch", "tree_rnn", "beam",
             "mlp_grad", "mlp_loss", "rnn_grad", "rnn_loss", "tree_rnn_grad", "tree_rnn_loss",
             "mlp_train", "rnn_train"]
# Reverse mode: each gradient workload (the loss and every weight's gradient) and its
# forward alone (the same program and data, the loss only), for backward/forward.
FORWARD_OF = {"mlp_grad": "mlp_loss", "rnn_grad": "rnn_loss", "tree_rnn_grad": "tree_rnn_loss"}
REVERSE_MODE = set(FORWARD_OF) | set(FORWARD_OF.values())
# Training: one optimizer step per run (Adam, lr 1e-3) on state that persists between
# runs; a run returns the step's loss, checked on the first step from the weights file.
TRAINING = {"mlp_train", "rnn_train"}


class CannotExpress(Exception):
    """The system has no way to write this workload (a result, not a failure)."""


class NotMeasured(Exception):
    """The benchmark does not run this system on this workload."""


def weights_path(workload):
    return os.path.join(DATA, workload, "weights.safetensors")


def case_dir(workload, case):
    return os.path.join(DATA, workload, case)


def cases(workload):
    folder = os.path.join(DATA, workload)
    return sorted(d for d in os.listdir(folder) if os.path.isdir(os.path.join(folder, d)))


def load_npy_dir(folder):
    return {f[:-4]: np.load(os.path.join(folder, f)) for f in sorted(os.listdir(folder)) if f.endswith(".npy")}


def load_weights(workload):
    from safetensors.numpy import load_file
    return load_file(weights_path(workload))


def max_relative_error(got, want):
    """max |got - want| / max |want| over every output (0 for exact matches); None if
    an output is missing or its shape differs."""
    worst = 0.0
    for name, w in want.items():
        g = got.get(name)
        if g is None or np.shape(g) != np.shape(w):
            return None
        w64, g64 = np.asarray(w, np.float64), np.asarray(g, np.float64)
        scale = float(np.max(np.abs(w64))) if w64.size else 0.0
        err = float(np.max(np.abs(g64 - w64))) if w64.size else 0.0
        if w.dtype.kind != "f" and err != 0:
            return float("inf")
        worst = max(worst, err / scale if scale > 0 else err)
    return worst


def agrees(err):
    """SPEC §1's tolerance: 1e-4 of the largest magnitude; integers exactly."""
    return err is not None and err <= 1e-4


def write_results_section(heading, text):
    """Puts `text`, a section that starts with `heading`, into bench/RESULTS.md in place
    of the section under that heading (up to the next `## `), or at the file's end."""
    path = os.path.join(BENCH, "RESULTS.md")
    with open(path) as f:
        old = f.read()
    text = text.rstrip("\n")
    start = old.find(heading)
    if start < 0:
        new = old.rstrip("\n") + "\n\n" + text + "\n"
    else:
        end = old.find("\n## ", start + len(heading))
        new = old[:start] + text + "\n" + (old[end:] if end >= 0 else "")
    with open(path, "w") as f:
        f.write(new)
