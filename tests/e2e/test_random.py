"""Random numbers end to end (SPEC §3): tests/programs/random_sampling.py compiled at
-O0 and -O2 and run by graph-run must give eager mode's draws bit for bit (floats
compared as their 32-bit patterns, not within a tolerance), for seeds that are
negative, beyond 32 bits, or staged; and the eager draws themselves must look
like their distributions (so that a generator that is identical but broken fails).
"""

import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as lib  # noqa: E402

PROGRAM = os.path.join(lib.PROGRAMS_DIR, "random_sampling.py")
SEEDS = [0, 1, -1, 42, 2**32 + 5, -(2**40) - 3, 2**63 - 1, -(2**63)]


def bits_equal(name, expected, actual):
    """None when the arrays are identical, float bits included; else a message."""
    if actual.dtype != expected.dtype or actual.shape != expected.shape:
        return f"{name}: {actual.dtype}{list(actual.shape)}, expected {expected.dtype}{list(expected.shape)}"
    if expected.dtype == np.float32:
        e, a = expected.view(np.uint32), actual.view(np.uint32)
    else:
        e, a = expected, actual
    if not np.array_equal(e, a):
        bad = np.argwhere(e != a)
        i = tuple(int(k) for k in bad[0]) if bad.ndim > 1 and len(bad[0]) else ()
        return f"{name}: {len(bad)} elements differ, first at {i}: {actual[i]!r} vs expected {expected[i]!r}"
    return None


def inputs_for(entry, seed, rng):
    if entry == "draws":
        return {"seed": np.array(seed, np.int64), "logits": rng.standard_normal((4, 6)).astype(np.float32),
                "p": rng.standard_normal(5).astype(np.float32)}
    if entry == "sample_decode":
        return {"seed": np.array(seed, np.int64), "start": np.array(int(rng.integers(0, 8)), np.int64),
                "table": (rng.standard_normal((8, 8)) * 2).astype(np.float32),
                "steps": np.array(int(rng.integers(1, 12)), np.int64)}
    return {"seed": np.array(seed, np.int64), "n": np.array(int(rng.integers(1, 4000)), np.int64)}


def check_identical(report, module, graph, level, work):
    for entry in ("draws", "sample_decode", "monte_carlo_pi"):
        fn = getattr(module, entry)
        for k, seed in enumerate(SEEDS):
            case = f"{entry} {level} seed={seed}"
            rng = np.random.default_rng(k)
            inputs = inputs_for(entry, seed, rng)
            try:
                expected = lib.eager_outputs(fn(**{n: v.copy() for n, v in inputs.items()}))
                proc, out_dir = lib.run_graph(graph, entry, inputs, os.path.join(work, f"{entry}_{level}_{k}"))
                if proc.returncode != 0:
                    raise lib.E2EError(f"graph-run {lib.describe_result(proc)}")
                actual = lib.load_outputs(out_dir, list(expected))
                problems = [p for n in expected if (p := bits_equal(n, expected[n], actual[n]))]
                report.check(case, not problems, "; ".join(problems),
                             f"{sum(v.size for v in expected.values())} values, bit for bit")
            except lib.E2EError as e:
                report.fail(case, str(e))


def check_distributions(report, module):
    """The eager draws against their distributions (wide bounds: a broken transform
    or a generator stuck on few values fails them, chance does not)."""
    import stagegraph as sg
    key = sg.random.key(2026)
    n = 200000
    u = np.asarray(sg.random.uniform(key, (n,)))
    report.check("uniform on [0, 1)", u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.005
                 and abs(u.var() - 1 / 12) < 0.002, f"min {u.min()} max {u.max()} mean {u.mean()} var {u.var()}")
    z = np.asarray(sg.random.normal(key, (n,))).astype(np.float64)
    within = [np.mean(np.abs(z) < s) for s in (1, 2, 3)]
    report.check("normal moments and tails", abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
                 and abs(within[0] - 0.6827) < 0.005 and abs(within[1] - 0.9545) < 0.003
                 and abs(within[2] - 0.9973) < 0.001, f"mean {z.mean()} std {z.std()} within 1/2/3 sd {within}")
    probs = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    c = np.asarray(sg.random.categorical(key, np.tile(np.log(probs), (n, 1))))
    freq = np.bincount(c, minlength=4) / n
    report.check("categorical frequencies", np.all(np.abs(freq - probs) < 0.005), f"frequencies {freq}")
    b = np.asarray(sg.random.bernoulli(key, 0.3, (n,)))
    report.check("bernoulli frequency", abs(b.mean() - 0.3) < 0.005, f"frequency {b.mean()}")
    keys = np.asarray(sg.random.split(key, 1000))
    report.check("split keys are distinct", len({tuple(k) for k in keys}) == 1000 and keys.min() >= 0
                 and keys.max() < 2**32, "repeated or out-of-range keys")
    a1 = np.asarray(sg.random.uniform(sg.random.key(5), (4,)))
    a2 = np.asarray(sg.random.uniform(sg.random.key(5), (4,)))
    a3 = np.asarray(sg.random.uniform(sg.random.key(6), (4,)))
    report.check("same key, same draws; another key, others", np.array_equal(a1, a2) and not np.array_equal(a1, a3),
                 f"{a1} {a2} {a3}")
    report.check("key words", np.array_equal(np.asarray(sg.random.key(-1)), [2**32 - 1, 2**32 - 1])
                 and np.array_equal(np.asarray(sg.random.key(2**32 + 7)), [1, 7]), "seed >> 32, seed & 0xffffffff")


def main():
    report = lib.Report("random numbers, eager mode against the runtime")
    module = lib.load_eager_module(PROGRAM)
    with tempfile.TemporaryDirectory(prefix="sg_random_") as work:
        for level in ("-O0", "-O2"):
            graph = os.path.join(work, f"random{level}.sgraph")
            try:
                lib.compile_program(PROGRAM, graph, [level])
            except lib.E2EError as e:
                report.fail(f"compile {level}", str(e))
                continue
            check_identical(report, module, graph, level, work)
    check_distributions(report, module)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
