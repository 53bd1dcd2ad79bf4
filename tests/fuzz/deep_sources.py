"""Writes fuzz_parse seeds that nest without brackets: 100,000-long operator,
attribute, call and subscript chains (a located error past the parser's bound of
3,000 levels) and a 2,500-term sum that compiles. Usage: deep_sources.py DIR."""
import os
import sys

ENTRY = "import stagegraph as sg\n\n\n@sg.function\ndef f(a: sg.f32[4]):\n    return "
SEEDS = {
    "deep_sum.py": ENTRY + " + ".join(["a"] * 100000) + "\n",
    "deep_attributes.py": ENTRY + "a" + ".T" * 100000 + "\n",
    "deep_calls.py": ENTRY + "a" + "()" * 100000 + "\n",
    "deep_subscripts.py": ENTRY + "a" + "[0]" * 100000 + "\n",
    "deep_constant.py": "N = " + " * ".join(["1"] * 100000) + "\n",
    "long_sum.py": ENTRY + " + ".join(["a"] * 2500) + "\n",
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, text in SEEDS.items():
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
