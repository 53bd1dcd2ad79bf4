"""JAX/XLA on CPU: the workloads as jitted functions with lax.while_loop, lax.cond and
lax.fori_loop. XLA compiles loops to native code: the bar for what an interpreter can
approach. jit traces Python, so a function that calls itself on traced values never
finishes tracing: the tree RNN's recursion cannot be written.

The training workloads are `jit` of a whole step (value_and_grad, then optax's Adam),
the parameters and the optimizer's state donated. The gradient workloads are
`jit(value_and_grad(loss))`; the RNN's loop is a `lax.scan`
over xs (JAX cannot reverse a `while_loop` whose trip count the data decides; under
jit, xs's length is static), and `rnn_loss` uses the same scan.

JAX runs with its default 32-bit mode: integer inputs are passed as int32 and integer
results returned as int64 (every value here fits in 32 bits). There is no model file:
`build` returns the weights file, and loading means tracing and compiling."""
import numpy as np

from common import CannotExpress, weights_path

NAME = "jax"


def _jax():
    import jax
    from jax import lax
    import jax.numpy as jnp
    return jax, lax, jnp


def mlp(w, x):
    _, _, jnp = _jax()
    h = jnp.maximum(x @ w["w1"] + w["b1"], 0)
    h = jnp.maximum(h @ w["w2"] + w["b2"], 0)
    return {"output_0": h @ w["w3"] + w["b3"]}


def cnn(w, x):
    _, lax, jnp = _jax()
    h = x
    for i in (1, 2, 3):
        h = lax.conv_general_dilated(h, w[f"k{i}"], (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        h = jnp.maximum(h + w[f"c{i}"], 0)
        h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return {"output_0": h.reshape(1, -1) @ w["w"] + w["b"]}


def mlp_dynamic(w, x, w1, b1, w2, b2, w3, b3):
    return mlp(dict(w1=w1, b1=b1, w2=w2, b2=b2, w3=w3, b3=b3), x)


def cnn_dynamic(_weights, x, k1, c1, k2, c2, k3, c3, w, b):
    # `_weights`: the (unused) weights file's tensors; `w` is the dense layer's input.
    return cnn(dict(k1=k1, c1=c1, k2=k2, c2=c2, k3=k3, c3=c3, w=w, b=b), x)


def rnn(w, xs):
    _, lax, jnp = _jax()

    def step(t, h):
        return jnp.tanh(xs[t] @ w["w"] + h @ w["u"] + w["b"])
    return {"output_0": lax.fori_loop(0, xs.shape[0], step, jnp.zeros(256, jnp.float32))}


def loop_overhead(w, n):
    _, lax, jnp = _jax()

    def body(state):
        i, acc = state
        return i + 1, acc + 1.0
    _, acc = lax.while_loop(lambda s: s[0] < n, body, (jnp.int32(0), jnp.float32(0)))
    return {"output_0": acc}


def dispatch(w, x):
    for k in range(1000):   # unrolled while tracing; XLA fuses the chain
        x = x * 1.0001 if k % 2 == 0 else x + 0.0001
    return {"output_0": x}


def _mlp_loss(p, x, y):
    jax, _, jnp = _jax()
    h = jnp.maximum(x @ p["w1"] + p["b1"], 0)
    h = jnp.maximum(h @ p["w2"] + p["b2"], 0)
    log_probs = jax.nn.log_softmax(h @ p["w3"] + p["b3"], axis=-1)
    return -jnp.mean(jnp.take_along_axis(log_probs, y[:, None], axis=1))


def _rnn_loss(p, xs):
    _, lax, jnp = _jax()

    def step(h, x):
        return jnp.tanh(x @ p["w"] + h @ p["u"] + p["b"]), None
    h, _ = lax.scan(step, jnp.zeros(256, jnp.float32), xs)
    return jnp.sum(h * h)


def _with_grads(loss, p, *args):
    jax, _, _ = _jax()
    value, grads = jax.value_and_grad(loss)(p, *args)
    return {"loss": value, **{f"grads.{k}": g for k, g in grads.items()}}


def mlp_grad(_weights, x, y, w1, b1, w2, b2, w3, b3):
    return _with_grads(_mlp_loss, dict(w1=w1, b1=b1, w2=w2, b2=b2, w3=w3, b3=b3), x, y)


def mlp_loss(_weights, x, y, w1, b1, w2, b2, w3, b3):
    return {"loss": _mlp_loss(dict(w1=w1, b1=b1, w2=w2, b2=b2, w3=w3, b3=b3), x, y)}


def rnn_grad(_weights, xs, w, u, b):
    return _with_grads(_rnn_loss, dict(w=w, u=u, b=b), xs)


def rnn_loss(_weights, xs, w, u, b):
    return {"loss": _rnn_loss(dict(w=w, u=u, b=b), xs)}


TRAIN_LOSSES = {"mlp_train": (_mlp_loss, ("x", "y")), "rnn_train": (_rnn_loss, ("xs",))}


def _train_step(workload):
    """jit of one Adam step (optax, lr 1e-3): (params, opt state, data) -> (params,
    opt state, loss), the params and the state donated so XLA updates them in place."""
    import functools
    import optax
    jax, _, _ = _jax()
    loss, names = TRAIN_LOSSES[workload]
    tx = optax.adam(1e-3)

    @functools.partial(jax.jit, donate_argnums=(0, 1))
    def step(p, s, *data):
        value, g = jax.value_and_grad(loss)(p, *data)
        updates, s = tx.update(g, s, p)
        return optax.apply_updates(p, updates), s, value
    return tx, step, names


def tree_rnn(w, root, left, right, xs):
    raise CannotExpress("recursion: jit cannot trace a function that calls itself on traced values")


def beam(w, start, steps):
    _, lax, jnp = _jax()

    def body(state):
        i, tok, h, score, check = state
        h = jnp.tanh(w["embedding"][tok] @ w["w"] + h @ w["u"] + w["b"])
        logits = h @ w["v"]
        nxt = jnp.argmax(logits).astype(jnp.int32)
        tok = lax.cond(nxt == 1, lambda: start, lambda: nxt)
        check = (check * 31 + tok) % 1000003
        return i + 1, tok, h, score + jnp.max(logits), check
    state = (jnp.int32(0), start, jnp.zeros(128, jnp.float32), jnp.float32(0), jnp.int32(0))
    _, tok, _, score, check = lax.while_loop(lambda s: s[0] < steps, body, state)
    return {"token": tok, "score": score, "check": check}


BUILDERS = {f.__name__: f for f in (mlp, mlp_dynamic, cnn, cnn_dynamic, rnn, loop_overhead, dispatch, tree_rnn, beam,
                                    mlp_grad, mlp_loss, rnn_grad, rnn_loss)}


def build(workload, weights, out_dir):
    if workload in TRAIN_LOSSES:
        import optax  # noqa: F401 - a missing optax is this peer's result for the row
    if workload in ("tree_rnn", "tree_rnn_grad", "tree_rnn_loss"):
        tree_rnn(None, None, None, None, None)
    return weights_path(workload)


def _to_jax(value):
    return value.astype(np.int32) if value.dtype == np.int64 else value


def _to_numpy(value):
    a = np.asarray(value)
    return a.astype(np.int64) if a.dtype == np.int32 else a


def load(workload, path, threads):
    """A callable inputs -> {name: array}: the jitted function with the weights as
    device arrays. Threads are set by the process (XLA_FLAGS), see timing.py."""
    jax, _, _ = _jax()
    from safetensors.numpy import load_file
    weights = {k: jax.device_put(v) for k, v in load_file(path).items()}
    if workload in TRAIN_LOSSES:
        tx, step, names = _train_step(workload)
        state = [weights, tx.init(weights)]

        def run_step(inputs):
            state[0], state[1], value = step(state[0], state[1], *(_to_jax(inputs[n]) for n in names))
            return {"loss": np.asarray(value)}
        return run_step
    fn = jax.jit(BUILDERS[workload])

    def run(inputs):
        out = fn(weights, **{k: _to_jax(v) for k, v in inputs.items()})
        return {k: _to_numpy(v) for k, v in out.items()}
    return run
