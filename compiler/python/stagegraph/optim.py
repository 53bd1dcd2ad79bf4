"""stagegraph.optim: optimizers, gradient clipping and learning-rate schedules (SPEC §12).

This file is written in the staged language. graph-compile stages it as a module of
the program that imports it (``from stagegraph import optim``, ``import
stagegraph.optim as optim``, ``sg.optim``), so its functions compile like the
program's own; eager mode imports it as ordinary Python over the eager ops. The
same text runs both ways, so compiled and eager numbers agree.

Each optimizer is an init/update pair over any structure of tensors (tuples, lists,
dicts, named tuples, dataclasses, the program's objects), as optax has them::

    opt = optim.adam(lr=1e-3)
    opt_state = opt.init(params)
    params, opt_state = opt.update(params, grads, opt_state)

The state is a named tuple whose ``count`` (an i32 scalar tensor) counts the updates
made, so ``update`` is a pure function of its inputs. The update rules are
PyTorch's (torch.optim.SGD, Adam, AdamW, RMSprop, with their defaults). ``lr`` is a
number or a schedule: a function of the step (the number of updates made before
this one, a staged integer tensor or a Python int) giving the learning rate.
"""

import collections

import stagegraph as sg

PI = 3.141592653589793

SgdState = collections.namedtuple("SgdState", ["count", "momentum"])
AdamState = collections.namedtuple("AdamState", ["count", "mu", "nu"])
RmspropState = collections.namedtuple("RmspropState", ["count", "nu", "momentum"])


# ---- checks ------------------------------------------------------------------------

def _number(name, what, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(name + ": " + what + " must be a number, got " + str(value))
    return float(value)


def _at_least(name, what, value, low):
    v = _number(name, what, value)
    if v < low:
        raise ValueError(name + ": " + what + " must be >= " + str(low) + ", got " + str(value))
    return v


def _fraction(name, what, value):
    v = _number(name, what, value)
    if v < 0.0 or v >= 1.0:
        raise ValueError(name + ": " + what + " must be in [0, 1), got " + str(value))
    return v


def _learning_rate(name, lr):
    if isinstance(lr, (int, float)) and not isinstance(lr, bool):
        return _at_least(name, "lr", lr, 0.0)
    if isinstance(lr, (_Constant, _WarmupLinear, _CosineDecay, _WarmupCosineDecay)):
        return lr
    raise TypeError(name + ": lr must be a number or a schedule of stagegraph.optim, got " + str(lr))


def _steps(name, what, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(name + ": " + what + " must be a positive int, got " + str(value))
    return value


# ---- schedules: step -> learning rate ----------------------------------------------

def _step_f32(step):
    if isinstance(step, (int, float)):
        return sg.full((), float(step))
    return sg.astype(step, sg.f32)


class _Constant:
    def __init__(self, value):
        self.value = value

    def __call__(self, step):
        return sg.full((), self.value) + 0.0 * _step_f32(step)


class _WarmupLinear:
    def __init__(self, init_value, peak_value, warmup_steps):
        self.init_value = init_value
        self.peak_value = peak_value
        self.warmup_steps = warmup_steps

    def __call__(self, step):
        frac = sg.minimum(_step_f32(step), float(self.warmup_steps)) / float(self.warmup_steps)
        return self.init_value + (self.peak_value - self.init_value) * frac


class _CosineDecay:
    def __init__(self, init_value, decay_steps, alpha):
        self.init_value = init_value
        self.decay_steps = decay_steps
        self.alpha = alpha

    def __call__(self, step):
        frac = sg.minimum(_step_f32(step), float(self.decay_steps)) / float(self.decay_steps)
        cosine = 0.5 * (1.0 + sg.cos(PI * frac))
        return self.init_value * ((1.0 - self.alpha) * cosine + self.alpha)


class _WarmupCosineDecay:
    def __init__(self, init_value, peak_value, warmup_steps, decay_steps, end_value):
        self.warmup = _WarmupLinear(init_value, peak_value, warmup_steps)
        self.peak_value = peak_value
        self.warmup_steps = warmup_steps
        self.decay_steps = decay_steps
        self.end_value = end_value

    def __call__(self, step):
        s = _step_f32(step)
        span = float(self.decay_steps - self.warmup_steps)
        frac = sg.minimum(sg.maximum(s - float(self.warmup_steps), 0.0), span) / span
        cosine = 0.5 * (1.0 + sg.cos(PI * frac))
        decayed = self.end_value + (self.peak_value - self.end_value) * cosine
        return sg.where(s < float(self.warmup_steps), self.warmup(step), decayed)


def constant(value):
    """The learning rate `value` at every step."""
    return _Constant(_at_least("constant", "value", value, 0.0))


def warmup_linear(peak_value, warmup_steps, init_value=0.0):
    """From init_value at step 0 linearly to peak_value at step warmup_steps, then peak_value."""
    return _WarmupLinear(_at_least("warmup_linear", "init_value", init_value, 0.0),
                         _at_least("warmup_linear", "peak_value", peak_value, 0.0),
                         _steps("warmup_linear", "warmup_steps", warmup_steps))


def cosine_decay(init_value, decay_steps, alpha=0.0):
    """init_value * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha)."""
    return _CosineDecay(_at_least("cosine_decay", "init_value", init_value, 0.0),
                        _steps("cosine_decay", "decay_steps", decay_steps),
                        _at_least("cosine_decay", "alpha", alpha, 0.0))


def warmup_cosine_decay(peak_value, warmup_steps, decay_steps, init_value=0.0, end_value=0.0):
    """warmup_linear to peak_value over warmup_steps, then a cosine from peak_value at
    warmup_steps to end_value at decay_steps (a total count), end_value after."""
    name = "warmup_cosine_decay"
    warmup = _steps(name, "warmup_steps", warmup_steps)
    total = _steps(name, "decay_steps", decay_steps)
    if total <= warmup:
        raise ValueError(name + ": decay_steps must exceed warmup_steps, got " + str(decay_steps))
    return _WarmupCosineDecay(_at_least(name, "init_value", init_value, 0.0),
                              _at_least(name, "peak_value", peak_value, 0.0), warmup, total,
                              _at_least(name, "end_value", end_value, 0.0))


def _lr_at(lr, count):
    if isinstance(lr, float):
        return lr
    return lr(count)


# ---- gradient transformations ------------------------------------------------------

def global_norm(tree):
    """sqrt of the sum of squares of every leaf of `tree` (an f32 scalar)."""
    total = sg.zeros(())

    def add(leaf):
        nonlocal total
        total = total + sg.sum(sg.square(sg.astype(leaf, sg.f32)))
        return leaf

    sg.tree_map(add, tree)
    return sg.sqrt(total)


def clip_by_global_norm(grads, max_norm):
    """grads scaled by min(1, max_norm / (global_norm(grads) + 1e-6)), as
    torch.nn.utils.clip_grad_norm_; the same structure back."""
    limit = _at_least("clip_by_global_norm", "max_norm", max_norm, 0.0)
    scale = sg.minimum(limit / (global_norm(grads) + 1e-6), 1.0)
    return sg.tree_map(lambda g: g * sg.astype(scale, g.dtype), grads)


def _decayed(grads, params, weight_decay):
    # L2 regularisation folded into the gradient: g + weight_decay * p.
    if weight_decay == 0.0:
        return grads
    return sg.tree_map(lambda g, p: g + weight_decay * p, grads, params)


def _zeros(params):
    return sg.tree_map(sg.zeros_like, params)


def _count0():
    return sg.zeros((), dtype=sg.i32)


# ---- optimizers --------------------------------------------------------------------

class _Sgd:
    def __init__(self, lr, momentum, nesterov, weight_decay):
        self.lr = lr
        self.momentum = momentum
        self.nesterov = nesterov
        self.weight_decay = weight_decay

    def init(self, params):
        return SgdState(_count0(), _zeros(params) if self.momentum != 0.0 else None)

    def update(self, params, grads, opt_state):
        lr = _lr_at(self.lr, opt_state.count)
        g = _decayed(grads, params, self.weight_decay)
        buf = opt_state.momentum
        if self.momentum != 0.0:
            mom = self.momentum
            buf = sg.tree_map(lambda b, d: mom * b + d, buf, g)
            if self.nesterov:
                g = sg.tree_map(lambda d, b: d + mom * b, g, buf)
            else:
                g = buf
        new_params = sg.tree_map(lambda p, d: p - lr * d, params, g)
        return new_params, SgdState(opt_state.count + 1, buf)


class _Adam:
    def __init__(self, lr, b1, b2, eps, weight_decay, decoupled):
        self.lr = lr
        self.b1 = b1
        self.b2 = b2
        self.eps = eps
        self.weight_decay = weight_decay
        self.decoupled = decoupled  # AdamW: p * (1 - lr * weight_decay) before the step

    def init(self, params):
        return AdamState(_count0(), _zeros(params), _zeros(params))

    def update(self, params, grads, opt_state):
        lr = _lr_at(self.lr, opt_state.count)
        b1 = self.b1
        b2 = self.b2
        eps = self.eps
        count = opt_state.count + 1
        t = sg.astype(count, sg.f32)
        if self.decoupled:
            g = grads
            if self.weight_decay != 0.0:
                keep = 1.0 - lr * self.weight_decay
                params = sg.tree_map(lambda p: p * keep, params)
        else:
            g = _decayed(grads, params, self.weight_decay)
        mu = sg.tree_map(lambda m, d: b1 * m + (1.0 - b1) * d, opt_state.mu, g)
        nu = sg.tree_map(lambda v, d: b2 * v + (1.0 - b2) * (d * d), opt_state.nu, g)
        step_size = lr / (1.0 - b1 ** t)
        root_c2 = sg.sqrt(1.0 - b2 ** t)
        new_params = sg.tree_map(lambda p, m, v: p - step_size * m / (sg.sqrt(v) / root_c2 + eps), params, mu, nu)
        return new_params, AdamState(count, mu, nu)


class _Rmsprop:
    def __init__(self, lr, alpha, eps, momentum, weight_decay):
        self.lr = lr
        self.alpha = alpha
        self.eps = eps
        self.momentum = momentum
        self.weight_decay = weight_decay

    def init(self, params):
        return RmspropState(_count0(), _zeros(params), _zeros(params) if self.momentum != 0.0 else None)

    def update(self, params, grads, opt_state):
        lr = _lr_at(self.lr, opt_state.count)
        alpha = self.alpha
        eps = self.eps
        g = _decayed(grads, params, self.weight_decay)
        nu = sg.tree_map(lambda v, d: alpha * v + (1.0 - alpha) * (d * d), opt_state.nu, g)
        step = sg.tree_map(lambda d, v: d / (sg.sqrt(v) + eps), g, nu)
        buf = opt_state.momentum
        if self.momentum != 0.0:
            mom = self.momentum
            buf = sg.tree_map(lambda b, s: mom * b + s, buf, step)
            step = buf
        new_params = sg.tree_map(lambda p, s: p - lr * s, params, step)
        return new_params, RmspropState(opt_state.count + 1, nu, buf)


def sgd(lr, momentum=0.0, nesterov=False, weight_decay=0.0):
    """torch.optim.SGD (dampening 0): d = g + weight_decay * p; with momentum,
    buf = momentum * buf + d and d = buf (nesterov: d + momentum * buf); p -= lr * d."""
    name = "sgd"
    mom = _fraction(name, "momentum", momentum)
    if not isinstance(nesterov, bool):
        raise TypeError(name + ": nesterov must be True or False, got " + str(nesterov))
    if nesterov and mom == 0.0:
        raise ValueError(name + ": nesterov needs a momentum > 0")
    return _Sgd(_learning_rate(name, lr), mom, nesterov, _at_least(name, "weight_decay", weight_decay, 0.0))


def adam(lr=1e-3, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.0):
    """torch.optim.Adam: weight_decay is L2 added to the gradient."""
    name = "adam"
    return _Adam(_learning_rate(name, lr), _fraction(name, "b1", b1), _fraction(name, "b2", b2),
                 _at_least(name, "eps", eps, 0.0), _at_least(name, "weight_decay", weight_decay, 0.0), False)


def adamw(lr=1e-3, b1=0.9, b2=0.999, eps=1e-8, weight_decay=1e-2):
    """torch.optim.AdamW: p *= 1 - lr * weight_decay, then Adam's step without L2."""
    name = "adamw"
    return _Adam(_learning_rate(name, lr), _fraction(name, "b1", b1), _fraction(name, "b2", b2),
                 _at_least(name, "eps", eps, 0.0), _at_least(name, "weight_decay", weight_decay, 0.0), True)


def rmsprop(lr=1e-2, alpha=0.99, eps=1e-8, momentum=0.0, weight_decay=0.0):
    """torch.optim.RMSprop (not centered): v = alpha * v + (1 - alpha) * g^2;
    s = g / (sqrt(v) + eps); with momentum, buf = momentum * buf + s and s = buf; p -= lr * s."""
    name = "rmsprop"
    return _Rmsprop(_learning_rate(name, lr), _fraction(name, "alpha", alpha), _at_least(name, "eps", eps, 0.0),
                    _fraction(name, "momentum", momentum), _at_least(name, "weight_decay", weight_decay, 0.0))
