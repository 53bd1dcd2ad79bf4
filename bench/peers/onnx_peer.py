"""ONNX Runtime (CPU): the workloads as ONNX graphs built with the onnx helper API,
control flow as real Loop and If nodes. ONNX has no re-entrant function call, so the
tree RNN's recursion cannot be written."""
import os

import numpy as np

from common import REVERSE_MODE, TRAINING, CannotExpress, NotMeasured

NAME = "onnxruntime"
OPSET = 17
F32, I64, BOOL = 1, 7, 9   # onnx.TensorProto element types


def _h():
    from onnx import helper, numpy_helper
    return helper, numpy_helper


def _value(name, elem, shape):
    return _h()[0].make_tensor_value_info(name, elem, shape)


def _init(name, array):
    return _h()[1].from_array(np.asarray(array), name)


def _node(op, inputs, outputs, **attrs):
    return _h()[0].make_node(op, inputs, outputs, **attrs)


def _graph(name, nodes, inputs, outputs, initializers=()):
    return _h()[0].make_graph(nodes, name, inputs, outputs, list(initializers))


def _dense_relu(x, w, b, out, relu=True):
    nodes = [_node("MatMul", [x, w], [out + "_mm"]),
             _node("Add", [out + "_mm", b], [out + "_pre" if relu else out])]
    if relu:
        nodes.append(_node("Relu", [out + "_pre"], [out]))
    return nodes


def mlp(w):
    nodes = (_dense_relu("x", "w1", "b1", "h1") + _dense_relu("h1", "w2", "b2", "h2")
             + _dense_relu("h2", "w3", "b3", "output_0", relu=False))
    return _graph("mlp", nodes, [_value("x", F32, ["N", 784])], [_value("output_0", F32, ["N", 10])],
                  [_init(k, v) for k, v in w.items()])


def cnn(w):
    nodes, inits, h = [_node("Transpose", ["x"], ["x_nchw"], perm=[0, 3, 1, 2])], [], "x_nchw"
    for i in (1, 2, 3):
        inits += [_init(f"k{i}", w[f"k{i}"].transpose(3, 2, 0, 1)), _init(f"c{i}", w[f"c{i}"])]
        nodes += [_node("Conv", [h, f"k{i}", f"c{i}"], [f"conv{i}"], pads=[1, 1, 1, 1]),
                  _node("Relu", [f"conv{i}"], [f"relu{i}"]),
                  _node("MaxPool", [f"relu{i}"], [f"pool{i}"], kernel_shape=[2, 2], strides=[2, 2])]
        h = f"pool{i}"
    inits += [_init("flat_shape", np.array([1, -1], np.int64)), _init("w", w["w"]), _init("b", w["b"])]
    nodes += [_node("Transpose", [h], ["nhwc"], perm=[0, 2, 3, 1]),   # flatten in NHWC order
              _node("Reshape", ["nhwc", "flat_shape"], ["flat"])]
    nodes += _dense_relu("flat", "w", "b", "output_0", relu=False)
    return _graph("cnn", nodes, [_value("x", F32, [1, 32, 32, 3])], [_value("output_0", F32, [1, 10])], inits)


# The same models with weights (and filters) as graph inputs instead of initializers.
MLP_SHAPES = dict(w1=[784, 512], b1=[512], w2=[512, 512], b2=[512], w3=[512, 10], b3=[10])
CNN_SHAPES = dict(k1=[3, 3, 3, 16], c1=[16], k2=[3, 3, 16, 32], c2=[32], k3=[3, 3, 32, 64], c3=[64],
                  w=[1024, 10], b=[10])


def mlp_dynamic(w):
    g = mlp({})
    g.input.extend([_value(k, F32, s) for k, s in MLP_SHAPES.items()])
    return g


def cnn_dynamic(w):
    # Filters arrive HWIO, as every system gets them; ONNX's Conv takes OIHW, so the
    # graph transposes each (a few KiB) in the run.
    nodes, h = [_node("Transpose", ["x"], ["x_nchw"], perm=[0, 3, 1, 2])], "x_nchw"
    for i in (1, 2, 3):
        nodes += [_node("Transpose", [f"k{i}"], [f"k{i}_oihw"], perm=[3, 2, 0, 1]),
                  _node("Conv", [h, f"k{i}_oihw", f"c{i}"], [f"conv{i}"], pads=[1, 1, 1, 1]),
                  _node("Relu", [f"conv{i}"], [f"relu{i}"]),
                  _node("MaxPool", [f"relu{i}"], [f"pool{i}"], kernel_shape=[2, 2], strides=[2, 2])]
        h = f"pool{i}"
    nodes += [_node("Transpose", [h], ["nhwc"], perm=[0, 2, 3, 1]),
              _node("Reshape", ["nhwc", "flat_shape"], ["flat"])]
    nodes += _dense_relu("flat", "w", "b", "output_0", relu=False)
    inputs = [_value("x", F32, [1, 32, 32, 3])] + [_value(k, F32, s) for k, s in CNN_SHAPES.items()]
    return _graph("cnn_dynamic", nodes, inputs, [_value("output_0", F32, [1, 10])],
                  [_init("flat_shape", np.array([1, -1], np.int64))])


def _loop_body(name, carried_in, carried_out, nodes):
    """A Loop body: (iteration, cond, carried...) -> (cond, carried...)."""
    inputs = [_value("iter", I64, []), _value("cond_in", BOOL, [])] + carried_in
    nodes = [_node("Identity", ["cond_in"], ["cond_out"])] + nodes
    return _graph(name, nodes, inputs, [_value("cond_out", BOOL, [])] + carried_out)


def rnn(w):
    body = _loop_body("rnn_step", [_value("h_in", F32, [256])], [_value("h_out", F32, [256])], [
        _node("Gather", ["xs", "iter"], ["x_t"], axis=0),
        _node("MatMul", ["x_t", "w"], ["xw"]),
        _node("MatMul", ["h_in", "u"], ["hu"]),
        _node("Add", ["xw", "hu"], ["s1"]),
        _node("Add", ["s1", "b"], ["s2"]),
        _node("Tanh", ["s2"], ["h_out"])])
    inits = [_init(k, v) for k, v in w.items()]
    inits += [_init("zero", np.array(0, np.int64)), _init("true", np.array(True)),
              _init("h0", np.zeros(256, np.float32))]
    nodes = [_node("Shape", ["xs"], ["xs_shape"]),
             _node("Gather", ["xs_shape", "zero"], ["steps"], axis=0),
             _node("Loop", ["steps", "true", "h0"], ["output_0"], body=body)]
    return _graph("rnn", nodes, [_value("xs", F32, ["T", 64])], [_value("output_0", F32, [256])], inits)


def loop_overhead(w):
    body = _loop_body("add_one", [_value("acc_in", F32, [])], [_value("acc_out", F32, [])],
                      [_node("Add", ["acc_in", "one"], ["acc_out"])])
    inits = [_init("one", np.array(1, np.float32)), _init("true", np.array(True)),
             _init("acc0", np.array(0, np.float32))]
    nodes = [_node("Loop", ["n", "true", "acc0"], ["output_0"], body=body)]
    return _graph("loop_overhead", nodes, [_value("n", I64, [])], [_value("output_0", F32, [])], inits)


def dispatch(w):
    nodes, x = [], "x"
    for k in range(1000):
        y = "output_0" if k == 999 else f"t{k}"
        nodes.append(_node("Mul", [x, "c_mul"], [y]) if k % 2 == 0 else _node("Add", [x, "c_add"], [y]))
        x = y
    inits = [_init("c_mul", np.array(1.0001, np.float32)), _init("c_add", np.array(0.0001, np.float32))]
    return _graph("dispatch", nodes, [_value("x", F32, [16])], [_value("output_0", F32, [16])], inits)


def tree_rnn(w):
    raise CannotExpress("recursion: ONNX graphs have Loop and If but no re-entrant call")


def beam(w):
    restart = _graph("restart", [_node("Identity", ["start"], ["tok_then"])], [], [_value("tok_then", I64, [])])
    keep = _graph("keep", [_node("Identity", ["nxt"], ["tok_else"])], [], [_value("tok_else", I64, [])])
    carried = [("tok", I64, []), ("h", F32, [128]), ("score", F32, []), ("check", I64, [])]
    body = _loop_body("decode_step", [_value(n + "_in", t, s) for n, t, s in carried],
                      [_value(n + "_out", t, s) for n, t, s in carried], [
        _node("Gather", ["embedding", "tok_in"], ["e"], axis=0),
        _node("MatMul", ["e", "w"], ["ew"]),
        _node("MatMul", ["h_in", "u"], ["hu"]),
        _node("Add", ["ew", "hu"], ["s1"]),
        _node("Add", ["s1", "b"], ["s2"]),
        _node("Tanh", ["s2"], ["h_out"]),
        _node("MatMul", ["h_out", "v"], ["logits"]),
        _node("ArgMax", ["logits"], ["nxt"], axis=0, keepdims=0),
        _node("ReduceMax", ["logits"], ["best"], keepdims=0),
        _node("Add", ["score_in", "best"], ["score_out"]),
        _node("Equal", ["nxt", "eos"], ["is_eos"]),
        _node("If", ["is_eos"], ["tok_out"], then_branch=restart, else_branch=keep),
        _node("Mul", ["check_in", "c31"], ["c1"]),
        _node("Add", ["c1", "tok_out"], ["c2"]),
        _node("Mod", ["c2", "modulus"], ["check_out"])])
    inits = [_init(k, v) for k, v in w.items()]
    inits += [_init("true", np.array(True)), _init("h0", np.zeros(128, np.float32)),
              _init("score0", np.array(0, np.float32)), _init("check0", np.array(0, np.int64)),
              _init("eos", np.array(1, np.int64)), _init("c31", np.array(31, np.int64)),
              _init("modulus", np.array(1000003, np.int64))]
    nodes = [_node("Loop", ["steps", "true", "start", "h0", "score0", "check0"],
                   ["token", "h_last", "score", "check"], body=body)]
    outputs = [_value("token", I64, []), _value("score", F32, []), _value("check", I64, [])]
    return _graph("beam", nodes, [_value("start", I64, []), _value("steps", I64, [])], outputs, inits)


BUILDERS = {f.__name__: f for f in (mlp, mlp_dynamic, cnn, cnn_dynamic, rnn, loop_overhead, dispatch, tree_rnn, beam)}


def build(workload, weights, out_dir):
    """Writes OUT_DIR/WORKLOAD.onnx; returns its path (CannotExpress if it has none)."""
    if workload in REVERSE_MODE | TRAINING:
        raise NotMeasured("ONNX Runtime (inference) has no automatic differentiation: the gradient and training "
                          "workloads (and the forwards) are measured on JAX, PyTorch and TensorFlow")
    import onnx
    graph = BUILDERS[workload](weights)
    model = _h()[0].make_model(graph, opset_imports=[_h()[0].make_opsetid("", OPSET)],
                               producer_name="stagegraph-bench")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    path = os.path.join(out_dir, f"{workload}.onnx")
    onnx.save(model, path)
    return path


def load(workload, path, threads):
    """A callable inputs -> {name: array}. Graph optimizations stay at ORT's default,
    except for `dispatch`, which the benchmark measures unfused (like our -O0)."""
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    if workload == "dispatch":
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    wanted = [n for n in names if n != "h_last"]

    def run(inputs):
        return dict(zip(wanted, session.run(wanted, inputs)))
    return run
