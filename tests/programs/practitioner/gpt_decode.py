"""A GPT-style decoder, written as one writes it first: a pre-norm block with
multi-head attention over a key/value cache that grows by one row per token,
the prompt fed token by token, then greedy decoding."""
import math

import stagegraph as sg


def layer_norm(x, g, b):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / sg.sqrt(var + 1e-5) * g + b


def block(x, k_cache, v_cache, p):
    heads = 4
    d = x.shape[0]
    hd = d // heads
    h = layer_norm(x, p["g1"], p["b1"])
    q, k, v = h @ p["wq"], h @ p["wk"], h @ p["wv"]
    k_cache = sg.concatenate([k_cache, k[None, :]])
    v_cache = sg.concatenate([v_cache, v[None, :]])
    qh = q.reshape(heads, hd)
    kh = k_cache.reshape(-1, heads, hd).transpose(1, 0, 2)       # (heads, T, hd)
    vh = v_cache.reshape(-1, heads, hd).transpose(1, 0, 2)
    att = sg.softmax((kh @ qh[:, :, None])[:, :, 0] / math.sqrt(hd), axis=-1)
    out = (att[:, None, :] @ vh)[:, 0, :].reshape(d)
    x = x + out @ p["wo"]
    x = x + sg.gelu(layer_norm(x, p["g2"], p["b2"]) @ p["w1"]) @ p["w2"]
    return x, k_cache, v_cache


@sg.function
def generate(prompt: sg.i64["P"], steps: sg.i64, wte: sg.f32[64, 32], wpe: sg.f32[64, 32],
             wq: sg.f32[32, 32], wk: sg.f32[32, 32], wv: sg.f32[32, 32], wo: sg.f32[32, 32],
             w1: sg.f32[32, 64], w2: sg.f32[64, 32],
             g1: sg.f32[32], b1: sg.f32[32], g2: sg.f32[32], b2: sg.f32[32]):
    p = {"wq": wq, "wk": wk, "wv": wv, "wo": wo, "w1": w1, "w2": w2,
         "g1": g1, "b1": b1, "g2": g2, "b2": b2}
    k_cache = sg.zeros((0, 32))
    v_cache = sg.zeros((0, 32))
    for t in range(prompt.shape[0]):
        x = wte[prompt[t]] + wpe[t]
        x, k_cache, v_cache = block(x, k_cache, v_cache, p)
    tokens = []
    pos = prompt.shape[0]
    for _ in range(steps):
        tok = sg.argmax(x @ wte.T)
        tokens.append(tok)
        x = wte[tok] + wpe[pos]
        x, k_cache, v_cache = block(x, k_cache, v_cache, p)
        pos += 1
    return sg.stack(tokens), k_cache
