"""The dynamic symbols libstagegraph.so defines are exactly its public API.

    check_exports.py NM LIBRARY HEADER_DIR...

Every defined dynamic symbol must be a C API function (sg_*) declared in a public
header, or belong to an SG_API class or function of namespace sg declared there
(its members, type information, vtable). Every SG_API function and every sg_*
function the headers declare must be exported. Prints the count by kind.
"""
import pathlib
import re
import subprocess
import sys


def public_names(header_dirs):
    """(C++ names marked SG_API in namespace sg, C functions sg_* declared)."""
    cxx, c = set(), set()
    for d in header_dirs:
        for h in sorted(pathlib.Path(d).glob("*.h")):
            text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", h.read_text(), flags=re.S)
            text = re.sub(r"^\s*#.*$", " ", text, flags=re.M)  # SG_API's own definition
            cxx.update(re.findall(r"\b(?:class|struct)\s+SG_API\s+(\w+)", text))
            for decl in re.findall(r"\bSG_API\b([^;{]*?)\(", text):
                name = re.findall(r"(\w+)\s*$", decl)
                if not name:
                    continue
                (c if name[0].startswith("sg_") else cxx).add(name[0])
    return cxx, c


def exported(nm, library):
    out = subprocess.run([nm, "-D", "--defined-only", library], check=True,
                         capture_output=True, text=True).stdout
    symbols = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            symbols.append((parts[1], parts[2]))
    names = "\n".join(s for _, s in symbols)
    demangled = subprocess.run(["c++filt"], input=names, check=True, capture_output=True,
                               text=True).stdout.splitlines()
    return [(kind, sym, dem) for (kind, sym), dem in zip(symbols, demangled)]


PREFIXES = ("typeinfo name for ", "typeinfo for ", "vtable for ", "VTT for ",
            "non-virtual thunk to ", "virtual thunk to ", "guard variable for ")


def owner(demangled):
    """'sg::Program::load_file(...)' -> ['sg', 'Program', 'load_file']."""
    for p in PREFIXES:
        if demangled.startswith(p):
            demangled = demangled[len(p):]
    head = re.split(r"[(<\s]", demangled, maxsplit=1)[0]
    return head.split("::")


def main():
    nm, library, header_dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
    cxx_api, c_api = public_names(header_dirs)
    if not cxx_api:
        sys.exit(f"no SG_API declarations found in {header_dirs}")
    symbols = exported(nm, library)
    bad, seen, counts = [], set(), {"C++": 0, "C": 0}
    for kind, sym, dem in symbols:
        parts = owner(dem)
        if sym in c_api:
            counts["C"] += 1
            seen.add(sym)
        elif len(parts) >= 2 and parts[0] == "sg" and parts[1] in cxx_api:
            counts["C++"] += 1
            seen.add(parts[1])
        else:
            bad.append(f"  {kind} {dem}" + (f"  ({sym})" if dem != sym else ""))
    missing = sorted((c_api | {n for n in cxx_api}) - seen)
    # A class whose members are all inline exports nothing; a function must be there.
    missing = [n for n in missing if n in c_api or not re.match(r"[A-Z]", n)]
    print(f"{library}: {len(symbols)} exported symbols: {counts['C++']} C++ (sg::), {counts['C']} C (sg_*)")
    if bad:
        print(f"{len(bad)} exported symbols are not public API (SG_API in {', '.join(header_dirs)}):")
        print("\n".join(bad))
    if missing:
        print(f"declared in the public headers but not exported: {', '.join(missing)}")
    sys.exit(1 if bad or missing else 0)


if __name__ == "__main__":
    main()
