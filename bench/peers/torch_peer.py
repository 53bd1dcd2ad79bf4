"""PyTorch eager: the tree RNN (where recursion has no graph form in the other peers, a
Python recursion over torch ops is what people would write) and the gradient workloads
with autograd (`torch.autograd.grad` of the loss; the RNN a Python loop over the
steps, the tree a Python recursion), their forwards under `torch.inference_mode`; the
training workloads as a training loop writes them: `backward()` then `torch.optim.Adam`."""
from common import FORWARD_OF, NotMeasured, weights_path

NAME = "pytorch"
MEASURED = {"tree_rnn", "mlp_train", "rnn_train"} | set(FORWARD_OF) | set(FORWARD_OF.values())


def build(workload, weights, out_dir):
    if workload not in MEASURED:
        raise NotMeasured("PyTorch eager is measured for tree_rnn and the gradient and training workloads only")
    return weights_path(workload)


def _encode(p, i, left, right, xs):
    import torch
    if left[i] < 0:
        return torch.tanh(xs[i] @ p["w_leaf"] + p["b_leaf"])
    h_left = _encode(p, left[i], left, right, xs)
    h_right = _encode(p, right[i], left, right, xs)
    return torch.tanh(h_left @ p["a"] + h_right @ p["b_mat"] + xs[i] @ p["w"] + p["b"])


def _tree_loss(p, t):
    left, right = t["left"].tolist(), t["right"].tolist()
    return _encode(p, int(t["root"]), left, right, t["xs"]).sum()


def _mlp_loss(p, t):
    import torch
    h = torch.relu(t["x"] @ p["w1"] + p["b1"])
    h = torch.relu(h @ p["w2"] + p["b2"])
    return torch.nn.functional.cross_entropy(h @ p["w3"] + p["b3"], t["y"])


def _rnn_loss(p, t):
    import torch
    xs = t["xs"]
    h = torch.zeros(256)
    for x in xs:   # T steps, as many as xs has rows
        h = torch.tanh(x @ p["w"] + h @ p["u"] + p["b"])
    return (h * h).sum()


LOSSES = {"mlp": (_mlp_loss, ("w1", "b1", "w2", "b2", "w3", "b3")), "rnn": (_rnn_loss, ("w", "u", "b")),
          "tree_rnn": (_tree_loss, ("w_leaf", "b_leaf", "a", "b_mat", "w", "b"))}


def load(workload, path, threads):
    import torch
    from safetensors.torch import load_file
    torch.set_num_threads(threads)
    if workload == "tree_rnn":
        w = load_file(path)

        def run_tree(inputs):
            with torch.inference_mode():
                left, right = inputs["left"].tolist(), inputs["right"].tolist()
                out = _encode(w, int(inputs["root"]), left, right, torch.from_numpy(inputs["xs"]))
            return {"output_0": out.numpy()}
        return run_tree

    base, kind = workload.rsplit("_", 1)
    loss_fn, names = LOSSES[base]
    if kind == "train":   # the weights as leaf tensors, torch.optim.Adam over them
        w = load_file(path)
        params = {k: w[k].clone().requires_grad_() for k in names}
        opt = torch.optim.Adam(list(params.values()), lr=1e-3)

        def run_step(inputs):
            opt.zero_grad(set_to_none=True)
            value = loss_fn(params, {k: torch.from_numpy(v) for k, v in inputs.items()})
            value.backward()
            opt.step()
            return {"loss": value.detach().numpy()}
        return run_step

    def run(inputs):
        t = {k: torch.from_numpy(v) for k, v in inputs.items()}
        if kind == "loss":
            with torch.inference_mode():
                return {"loss": loss_fn(t, t).numpy()}
        params = {k: t[k].requires_grad_() for k in names}
        value = loss_fn(params, t)
        grads = torch.autograd.grad(value, [params[k] for k in names])
        return {"loss": value.detach().numpy(), **{f"grads.{k}": g.numpy() for k, g in zip(names, grads)}}
    return run
