"""TensorFlow itself (not TFLite), for the gradient workloads: `tf.GradientTape` inside a
`tf.function` with an input signature (a graph, traced once at load), the gradients of
the loss with respect to the weights (entry inputs, watched by the tape). The RNN's
loop is Python `for` over `tf.range(T)`, which AutoGraph makes a `tf.while_loop`
whose gradient TensorFlow forms by keeping each step's values (T known only at run
time, as ours). A tf.function cannot call itself, so the tree RNN's recursion cannot
be written. The forwards (`*_loss`) are the same functions without the tape. The
training workloads are Keras models (Dense layers; a SimpleRNN, whose cell is the
rnn's tanh(x W + h U + b)) stepped by `train_on_batch` with Keras's Adam (lr 1e-3),
compiled with Keras's defaults.
Inference-only workloads are TFLite's rows."""
import os

from common import FORWARD_OF, CannotExpress, NotMeasured, weights_path

NAME = "tensorflow"
MEASURED = set(FORWARD_OF) | set(FORWARD_OF.values()) | {"mlp_train", "rnn_train"}
MLP = {"w1": [784, 512], "b1": [512], "w2": [512, 512], "b2": [512], "w3": [512, 10], "b3": [10]}
RNN = {"w": [64, 256], "u": [256, 256], "b": [256]}


tf = None   # the module, imported by _tf(): AutoGraph converts the losses, which only read it


def _tf():
    global tf
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow
    tf = tensorflow
    return tf


def _mlp_loss(p, x, y):
    h = tf.nn.relu(x @ p["w1"] + p["b1"])
    h = tf.nn.relu(h @ p["w2"] + p["b2"])
    logits = h @ p["w3"] + p["b3"]
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))


def _rnn_loss(p, xs):
    h = tf.zeros([1, 256])
    for t in tf.range(tf.shape(xs)[0]):   # AutoGraph: a tf.while_loop
        h = tf.tanh(tf.expand_dims(xs[t], 0) @ p["w"] + h @ p["u"] + p["b"])
    return tf.reduce_sum(h * h)


def _model(loss, data_specs, weight_shapes, grad):
    tf = _tf()
    specs = data_specs + [tf.TensorSpec(s, tf.float32, name=k) for k, s in weight_shapes.items()]
    names = [s.name for s in data_specs]

    @tf.function(input_signature=specs)
    def model(*args):
        data = args[:len(names)]
        p = dict(zip(weight_shapes, args[len(names):]))
        if not grad:
            return {"loss": loss(p, *data)}
        with tf.GradientTape() as tape:
            tape.watch(list(p.values()))
            value = loss(p, *data)
        grads = tape.gradient(value, p)
        return {"loss": value, **{f"grads.{k}": g for k, g in grads.items()}}
    return model, names + list(weight_shapes)


def _builder(workload):
    tf = _tf()
    base, kind = workload.rsplit("_", 1)
    if base == "mlp":
        data = [tf.TensorSpec([None, 784], tf.float32, name="x"), tf.TensorSpec([None], tf.int64, name="y")]
        return _model(_mlp_loss, data, MLP, kind == "grad")
    if base == "rnn":
        return _model(_rnn_loss, [tf.TensorSpec([None, 64], tf.float32, name="xs")], RNN, kind == "grad")
    raise CannotExpress("recursion: a tf.function cannot call itself")


def _keras_trainer(workload, path):
    """A compiled Keras model holding the weights file's values; a step is
    train_on_batch, whose result is the loss before the step's update."""
    tf = _tf()
    import keras
    import numpy as np
    from safetensors.numpy import load_file
    w = load_file(path)
    adam = keras.optimizers.Adam(learning_rate=1e-3)
    if workload == "mlp_train":
        model = keras.Sequential([keras.Input((784,)), keras.layers.Dense(512, activation="relu"),
                                  keras.layers.Dense(512, activation="relu"), keras.layers.Dense(10)])
        model.set_weights([w[k] for k in ("w1", "b1", "w2", "b2", "w3", "b3")])
        model.compile(optimizer=adam, loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        return lambda inputs: model.train_on_batch(inputs["x"], inputs["y"])
    model = keras.Sequential([keras.Input((None, 64)), keras.layers.SimpleRNN(256, activation="tanh")])
    model.set_weights([w["w"], w["u"], w["b"]])
    model.compile(optimizer=adam, loss=lambda _, h: tf.reduce_sum(h * h, axis=-1))
    target = np.zeros((1, 256), np.float32)
    return lambda inputs: model.train_on_batch(inputs["xs"][None], target)


def build(workload, weights, out_dir):
    if workload not in MEASURED:
        raise NotMeasured("TensorFlow itself is measured for the gradient workloads; its inference rows are TFLite's")
    if workload.startswith("tree_rnn"):
        _builder(workload)
    return weights_path(workload)


def load(workload, path, threads):
    """A callable inputs -> {name: array}: the traced tf.function (concrete function)."""
    tf = _tf()
    try:   # only before TensorFlow's runtime starts (TFLite's rows may have started it)
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(threads)
    except RuntimeError:
        pass
    if workload in ("mlp_train", "rnn_train"):
        import numpy as np
        step = _keras_trainer(workload, path)
        return lambda inputs: {"loss": np.asarray(step(inputs), np.float32).reshape(())}
    model, names = _builder(workload)
    fn = model.get_concrete_function()

    def run(inputs):
        out = fn(*(tf.constant(inputs[n]) for n in names))
        return {k: v.numpy() for k, v in out.items()}
    return run
