# Cross-compiling for 64-bit Arm Linux (make build-aarch64): Debian's cross
# toolchain, arm64 multiarch packages for what can sit beside the amd64 ones
# (FlatBuffers, mimalloc, GoogleTest), and an unpacked arm64 sysroot,
# SG_AARCH64_SYSROOT, for XNNPACK, pthreadpool and cpuinfo, whose arm64 packages
# cannot be installed beside the amd64 ones. Programs (flatc) come from the host.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)

set(SG_AARCH64_SYSROOT "" CACHE PATH "unpacked arm64 packages of XNNPACK, pthreadpool and cpuinfo")
if(SG_AARCH64_SYSROOT)
  set(_libs ${SG_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu)
  set(SG_XNNPACK_LIBRARY ${_libs}/libXNNPACK.so CACHE FILEPATH "")
  set(SG_PTHREADPOOL_LIBRARY ${_libs}/libpthreadpool.so CACHE FILEPATH "")
  set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,-rpath-link,${_libs}")
  set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,-rpath-link,${_libs}")
  # Tests run under qemu-aarch64 with the arm64 glibc of the multiarch install.
  set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-E;LD_LIBRARY_PATH=${_libs})
endif()
