# Finds Debian's XNNPACK and pthreadpool and wraps them in one imported target,
# stagegraph::xnnpack. XNNPACK ships neither a CMake config nor a pkg-config file,
# and Debian's cpuinfo config is broken (libXNNPACK.so links cpuinfo itself), so
# the header and libraries are found directly. Used by the build (kernels/xnnpack)
# and, installed beside stagegraphConfig.cmake, by static consumers of the runtime.
# Included from the top-level folder so that every folder sees the target.
# Sets stagegraph_XNNPACK_FOUND; the headers are optional (SG_XNNPACK_LIBRARIES_ONLY):
# a static consumer only links the libraries.
find_package(Threads QUIET)
find_library(SG_XNNPACK_LIBRARY NAMES XNNPACK)
find_library(SG_PTHREADPOOL_LIBRARY NAMES pthreadpool)
set(stagegraph_XNNPACK_FOUND FALSE)
if(SG_XNNPACK_LIBRARIES_ONLY)
  set(_sg_xnnpack_includes "")
else()
  find_path(SG_XNNPACK_INCLUDE_DIR xnnpack.h)
  find_path(SG_PTHREADPOOL_INCLUDE_DIR pthreadpool.h)
  if(NOT SG_XNNPACK_INCLUDE_DIR OR NOT SG_PTHREADPOOL_INCLUDE_DIR)
    return()
  endif()
  set(_sg_xnnpack_includes "${SG_XNNPACK_INCLUDE_DIR};${SG_PTHREADPOOL_INCLUDE_DIR}")
endif()
if(NOT SG_XNNPACK_LIBRARY OR NOT SG_PTHREADPOOL_LIBRARY OR NOT TARGET Threads::Threads)
  return()
endif()
if(NOT TARGET stagegraph::xnnpack)
  add_library(stagegraph::xnnpack INTERFACE IMPORTED)
  set_target_properties(stagegraph::xnnpack PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${_sg_xnnpack_includes}"
    INTERFACE_LINK_LIBRARIES "${SG_XNNPACK_LIBRARY};${SG_PTHREADPOOL_LIBRARY};Threads::Threads")
endif()
set(stagegraph_XNNPACK_FOUND TRUE)
