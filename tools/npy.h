// Tensor file I/O for the tools: NumPy .npy files (graph-run's inputs and outputs).
// Weights files (safetensors) are read by the compiler (compiler/staging/weights.h).
//
//   SG_ASSIGN_OR_RETURN(sg::Tensor x, sg::tools::read_npy("x.npy"));
//   SG_RETURN_IF_ERROR(sg::tools::write_npy("out/y.npy", y));
//
// Only what the runtime can hold is accepted: C order, little-endian f32, f16, i32,
// i64 and bool, at most kMaxRank dims. Anything else (big-endian data, Fortran order,
// object or structured arrays, other dtypes, truncated or malformed files) is
// rejected with kInvalidInput and a message that says what was wrong; nothing is
// ever converted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "stagegraph/status.h"
#include "stagegraph/tensor.h"

namespace sg::tools {

// Parses a whole .npy file image (format versions 1.0, 2.0 and 3.0).
Result<Tensor> parse_npy(std::span<const uint8_t> bytes);
// Reads and parses a .npy file; messages start with the path.
Result<Tensor> read_npy(const std::string& path);

// The bytes of a version 1.0 .npy file holding `t` (header padded with spaces to a
// multiple of 64 bytes and ended by '\n'; a 0-d tensor has shape ()).
std::vector<uint8_t> encode_npy(const Tensor& t);
// Writes `t` to `path`, a new file or an existing regular one (then *replaced,
// when given, is set). A symbolic link or anything but a regular file at `path`
// is refused (kInvalidArgument), never written through or replaced.
Status write_npy(const std::string& path, const Tensor& t, bool* replaced = nullptr);

// "f32[2, 10]" (a 0-d tensor: "f32[]").
std::string describe(const Tensor& t);

// The first `max_items` values in C order, e.g. "[0.1234, -1.5, 2, ...]"; a 0-d
// tensor gives the bare value ("3.5").
std::string format_values(const Tensor& t, size_t max_items);

// Reads a whole file; kInvalidInput naming the path when it cannot.
Result<std::vector<uint8_t>> read_file_bytes(const std::string& path);

}  // namespace sg::tools
