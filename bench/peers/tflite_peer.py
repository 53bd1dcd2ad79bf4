"""TensorFlow Lite: the workloads as tf.function programs written in plain Python
control flow (AutoGraph turns `while`/`for`/`if` on tensors into tf.while_loop and
tf.cond), converted by tf.lite.TFLiteConverter to builtin ops only (WHILE and IF
included), run by the TFLite interpreter with its default XNNPACK delegate. A
tf.function cannot call itself, so the tree RNN's recursion cannot be written."""
import os

from common import REVERSE_MODE, TRAINING, CannotExpress, NotMeasured

NAME = "tflite"


def _tf():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    return tf


def mlp(w):
    tf = _tf()

    @tf.function(input_signature=[tf.TensorSpec([None, 784], tf.float32, name="x")])
    def model(x):
        h = tf.nn.relu(x @ w["w1"] + w["b1"])
        h = tf.nn.relu(h @ w["w2"] + w["b2"])
        return {"output_0": h @ w["w3"] + w["b3"]}
    return model


def cnn(w):
    tf = _tf()

    @tf.function(input_signature=[tf.TensorSpec([1, 32, 32, 3], tf.float32, name="x")])
    def model(x):
        h = x
        for i in (1, 2, 3):   # a Python loop: unrolled while tracing
            h = tf.nn.relu(tf.nn.conv2d(h, w[f"k{i}"], 1, "SAME") + w[f"c{i}"])
            h = tf.nn.max_pool2d(h, 2, 2, "VALID")
        return {"output_0": tf.reshape(h, [1, -1]) @ w["w"] + w["b"]}
    return model


def _specs(shapes):
    tf = _tf()
    return [tf.TensorSpec(s, tf.float32, name=k) for k, s in shapes.items()]


def mlp_dynamic(w):
    tf = _tf()
    shapes = dict(w1=[784, 512], b1=[512], w2=[512, 512], b2=[512], w3=[512, 10], b3=[10])

    @tf.function(input_signature=[tf.TensorSpec([None, 784], tf.float32, name="x")] + _specs(shapes))
    def model(x, w1, b1, w2, b2, w3, b3):
        h = tf.nn.relu(x @ w1 + b1)
        h = tf.nn.relu(h @ w2 + b2)
        return {"output_0": h @ w3 + b3}
    return model


def cnn_dynamic(w):
    tf = _tf()
    shapes = dict(k1=[3, 3, 3, 16], c1=[16], k2=[3, 3, 16, 32], c2=[32], k3=[3, 3, 32, 64], c3=[64],
                  w=[1024, 10], b=[10])

    @tf.function(input_signature=[tf.TensorSpec([1, 32, 32, 3], tf.float32, name="x")] + _specs(shapes))
    def model(x, k1, c1, k2, c2, k3, c3, w, b):
        h = x
        for k, c in ((k1, c1), (k2, c2), (k3, c3)):
            h = tf.nn.relu(tf.nn.conv2d(h, k, 1, "SAME") + c)
            h = tf.nn.max_pool2d(h, 2, 2, "VALID")
        return {"output_0": tf.reshape(h, [1, -1]) @ w + b}
    return model


def rnn(w):
    tf = _tf()

    @tf.function(input_signature=[tf.TensorSpec([None, 64], tf.float32, name="xs")])
    def model(xs):
        h = tf.zeros([1, 256])
        for t in tf.range(tf.shape(xs)[0]):   # AutoGraph: a tf.while_loop
            h = tf.tanh(tf.expand_dims(xs[t], 0) @ w["w"] + h @ w["u"] + w["b"])
        return {"output_0": tf.reshape(h, [256])}
    return model


def loop_overhead(w):
    tf = _tf()

    @tf.function(input_signature=[tf.TensorSpec([], tf.int64, name="n")])
    def model(n):
        i = tf.constant(0, tf.int64)
        acc = tf.constant(0.0)
        while i < n:   # AutoGraph: a tf.while_loop
            acc += 1.0
            i += 1
        return {"output_0": acc}
    return model


def dispatch(w):
    tf = _tf()

    @tf.function(input_signature=[tf.TensorSpec([16], tf.float32, name="x")])
    def model(x):
        for k in range(1000):   # a Python loop: 1,000 nodes
            x = x * 1.0001 if k % 2 == 0 else x + 0.0001
        return {"output_0": x}
    return model


def tree_rnn(w):
    raise CannotExpress("recursion: a tf.function cannot call itself, and TFLite has no re-entrant call")


def beam(w):
    tf = _tf()

    @tf.function(input_signature=[tf.TensorSpec([], tf.int64, name="start"),
                                  tf.TensorSpec([], tf.int64, name="steps")])
    def model(start, steps):
        h = tf.zeros([1, 128])
        tok, score = start, tf.constant(0.0)
        check, i = tf.constant(0, tf.int64), tf.constant(0, tf.int64)
        while i < steps:   # AutoGraph: a tf.while_loop
            e = tf.reshape(tf.gather(w["embedding"], tok), [1, 64])
            h = tf.tanh(e @ w["w"] + h @ w["u"] + w["b"])
            logits = tf.reshape(h @ w["v"], [1000])
            nxt = tf.argmax(logits, output_type=tf.int64)
            score += tf.reduce_max(logits)
            if nxt == 1:   # AutoGraph: a tf.cond
                nxt = start
            tok = nxt
            check = (check * 31 + tok) % 1000003
            i += 1
        return {"token": tok, "score": score, "check": check}
    return model


BUILDERS = {f.__name__: f for f in (mlp, mlp_dynamic, cnn, cnn_dynamic, rnn, loop_overhead, dispatch, tree_rnn, beam)}


def build(workload, weights, out_dir):
    """Traces, converts and writes OUT_DIR/WORKLOAD.tflite; returns its path."""
    if workload in REVERSE_MODE | TRAINING:
        raise NotMeasured("TensorFlow Lite has no automatic differentiation: the gradient and training workloads "
                          "(and the forwards) are measured on JAX, PyTorch and TensorFlow")
    tf = _tf()
    model = BUILDERS[workload](weights)
    # Through a SavedModel, so that the .tflite file keeps the signature's input and
    # output names.
    saved = os.path.join(out_dir, f"{workload}.savedmodel")
    module = tf.Module()
    module.model = model
    tf.saved_model.save(module, saved, signatures=model.get_concrete_function())
    converter = tf.lite.TFLiteConverter.from_saved_model(saved)
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
    path = os.path.join(out_dir, f"{workload}.tflite")
    with open(path, "wb") as f:
        f.write(converter.convert())
    return path


def load(workload, path, threads):
    """A callable inputs -> {name: array}, through the interpreter's own tensors (set,
    invoke, get), resizing an input only when its shape changes."""
    tf = _tf()
    interpreter = tf.lite.Interpreter(model_path=path, num_threads=threads)
    signature = interpreter.get_signature_list()["serving_default"]
    runner = interpreter.get_signature_runner("serving_default")
    in_index = {n: runner.get_input_details()[n]["index"] for n in signature["inputs"]}
    out_index = {n: runner.get_output_details()[n]["index"] for n in signature["outputs"]}
    shapes = {}

    def run(inputs):
        changed = False
        for name, value in inputs.items():
            if shapes.get(name) != value.shape:
                interpreter.resize_tensor_input(in_index[name], list(value.shape))
                shapes[name], changed = value.shape, True
        if changed:
            interpreter.allocate_tensors()
        for name, value in inputs.items():
            interpreter.set_tensor(in_index[name], value)
        interpreter.invoke()
        return {n: interpreter.get_tensor(i) for n, i in out_index.items()}
    return run
