"""PyTorch eager, measured only for the tree RNN: where recursion has no graph form in
the other peers, a Python recursion over torch ops is what people would write."""
from common import weights_path

NAME = "pytorch"


class NotMeasured(Exception):
    """The benchmark does not run this system on this workload."""


def build(workload, weights, out_dir):
    if workload != "tree_rnn":
        raise NotMeasured("PyTorch eager is measured for tree_rnn only")
    return weights_path(workload)


def load(workload, path, threads):
    import torch
    from safetensors.torch import load_file
    torch.set_num_threads(threads)
    w = load_file(path)

    def encode(i, left, right, xs):
        if left[i] < 0:
            return torch.tanh(xs[i] @ w["w_leaf"] + w["b_leaf"])
        h_left = encode(int(left[i]), left, right, xs)
        h_right = encode(int(right[i]), left, right, xs)
        return torch.tanh(h_left @ w["a"] + h_right @ w["b_mat"] + xs[i] @ w["w"] + w["b"])

    def run(inputs):
        with torch.inference_mode():
            left, right = inputs["left"].tolist(), inputs["right"].tolist()
            out = encode(int(inputs["root"]), left, right, torch.from_numpy(inputs["xs"]))
        return {"output_0": out.numpy()}
    return run
