#!/usr/bin/env bash
# libstagegraph.so needs nothing of mimalloc and exports no allocator: no NEEDED
# entry for libmimalloc, and none of malloc, free, operator new or delete among
# its dynamic symbols (the runtime loads mimalloc privately, runtime/src/allocator.cc).
#
#   check_library_deps.sh READELF NM LIBRARY
set -euo pipefail
readelf=$1 nm=$2 lib=$3
needed=$("$readelf" -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "NEEDED: $(echo $needed)"
if echo "$needed" | grep -i mimalloc; then
  echo "error: $lib needs mimalloc"; exit 1
fi
allocators='^(malloc|free|calloc|realloc|reallocarray|posix_memalign|aligned_alloc|memalign|valloc|pvalloc|malloc_usable_size|_Zn[wa]m.*|_Zd[la]Pv.*|mi_.*)$'
defined=$("$nm" -D --defined-only "$lib" | awk '{print $NF}')
if bad=$(echo "$defined" | grep -E "$allocators"); then
  echo "error: $lib defines allocator symbols:"; echo "$bad"; exit 1
fi
echo "$lib: no mimalloc needed, no allocator exported ($(echo "$defined" | wc -l) dynamic symbols)"
