#!/usr/bin/env bash
# Installs the build into a fresh prefix, then builds the applications of
# examples/embed against it the way a user would (the C++ one with find_package,
# the C one with pkg-config), outside the build tree, and runs them on a graph
# compiled by the installed graph-compile.
#
#   embed_test.sh BUILD_DIR SOURCE_DIR WORK_DIR [MIMALLOC_SONAME]
set -euo pipefail
build=$1 src=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" > "$work/install.log"
libdir=$(dirname "$(find "$prefix" -name libstagegraph.a)")
for f in include/stagegraph/runtime.h include/stagegraph/version.h include/stagegraph/export.h bin/graph-compile; do
  [ -e "$prefix/$f" ] || { echo "not installed: $f"; exit 1; }
done
soname=$(readelf -d "$libdir/libstagegraph.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
echo "installed: $(cd "$prefix" && find . -type f -o -type l | sort | tr '\n' ' ')"
echo "SONAME $soname"
[ "$soname" = "$(basename "$(readlink "$libdir/libstagegraph.so")")" ] || { echo "libstagegraph.so -> not its SONAME"; exit 1; }

"$prefix/bin/graph-compile" "$src/examples/mlp.py" -o "$work/mlp.sgraph"
"$prefix/bin/graph-compile" "$src/examples/embed/swish.py" -o "$work/swish.sgraph"
# stagegraph.optim is embedded in graph-compile: the installed one stages it from anywhere.
cat > "$work/optim_step.py" <<'PY'
import stagegraph as sg
from stagegraph import optim

OPT = optim.adam(lr=optim.cosine_decay(1e-2, 100))


@sg.function
def step(w: sg.f32[4], g: sg.f32[4]):
    params, state = OPT.update({"w": w}, {"w": g}, OPT.init({"w": w}))
    return params
PY
(cd / && "$prefix/bin/graph-compile" "$work/optim_step.py" -o "$work/optim_step.sgraph")

echo "== C++ (find_package(stagegraph)): shared and static"
cmake -S "$src/examples/embed/cpp" -B "$work/cpp" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" > "$work/cpp.log"
cmake --build "$work/cpp" >> "$work/cpp.log" || { cat "$work/cpp.log"; exit 1; }
"$work/cpp/embed_cpp" "$work/mlp.sgraph" "$work/swish.sgraph"
"$work/cpp/embed_cpp_static" "$work/mlp.sgraph" "$work/swish.sgraph"
# The shared build needs libstagegraph alone (its dependencies are its own), and
# neither build links mimalloc.
readelf -d "$work/cpp/embed_cpp" | grep -q 'NEEDED.*libstagegraph' || { echo "embed_cpp: no libstagegraph"; exit 1; }
if readelf -d "$work/cpp/embed_cpp" | grep -E 'NEEDED.*(XNNPACK|pthreadpool|mimalloc)'; then
  echo "embed_cpp links the shared library's private dependencies"; exit 1
fi
if readelf -d "$work/cpp/embed_cpp_static" | grep 'NEEDED.*mimalloc'; then
  echo "embed_cpp_static links mimalloc"; exit 1
fi
echo "pkg-config --libs stagegraph: $(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --libs stagegraph)"

echo "== C, CMake (a C-only project: find_package(stagegraph), shared and static)"
cmake -S "$src/tests/install/c_consumer" -B "$work/c-cmake" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" > "$work/c-cmake.log"
cmake --build "$work/c-cmake" >> "$work/c-cmake.log" || { cat "$work/c-cmake.log"; exit 1; }
# The static runtime uses the system allocator; the shared one its private mimalloc,
# where the build has it (the last argument is its SONAME, or "system").
"$work/c-cmake/c_host_static" "$work/mlp.sgraph" system
"$work/c-cmake/c_host_shared" "$work/mlp.sgraph" "${4:-system}"

echo "== C (pkg-config stagegraph, stagegraph-static)"
for pc in stagegraph stagegraph-static; do
  make -s -C "$src/examples/embed/c" PKG_CONFIG_PATH="$libdir/pkgconfig" PC=$pc BUILD="$work/c-$pc" \
    CFLAGS="-O2 -Wall -Wextra -Werror"
  "$work/c-$pc/embed_c" "$work/mlp.sgraph" "$work/swish.sgraph"
done
if readelf -d "$work/c-stagegraph/embed_c" | grep -E 'NEEDED.*(XNNPACK|pthreadpool|mimalloc)'; then
  echo "embed_c links the shared library's private dependencies"; exit 1
fi
