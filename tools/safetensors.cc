// safetensors reading: an 8-byte little-endian header length, a JSON header
// {"name": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, ...},
// then the data. Every field is checked before any byte of data is touched.
#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

#include "npy.h"

namespace sg::tools {
namespace {

using nlohmann::json;

std::optional<DType> dtype_from_safetensors(const std::string& s) {
  if (s == "F32") return DType::kF32;
  if (s == "F16") return DType::kF16;
  if (s == "I32") return DType::kI32;
  if (s == "I64") return DType::kI64;
  if (s == "BOOL") return DType::kBool;
  return std::nullopt;
}

Result<Tensor> read_entry(const std::string& name, const json& info,
                          std::span<const uint8_t> data) {
  const auto bad = [&](const std::string& what) {
    return invalid_input("tensor '" + name + "': " + what);
  };
  if (!info.is_object()) return bad("header entry is not an object");
  if (!info.contains("dtype") || !info["dtype"].is_string()) return bad("missing 'dtype'");
  const std::string dtype_text = info["dtype"].get<std::string>();
  const std::optional<DType> dtype = dtype_from_safetensors(dtype_text);
  if (!dtype)
    return bad("unsupported dtype '" + dtype_text + "' (expected F32, F16, I32, I64 or BOOL)");
  if (!info.contains("shape") || !info["shape"].is_array()) return bad("missing 'shape'");
  const json& shape_json = info["shape"];
  if (shape_json.size() > size_t(kMaxRank))
    return bad("rank " + std::to_string(shape_json.size()) + " exceeds the maximum of " +
               std::to_string(kMaxRank));
  std::vector<int64_t> shape;
  int64_t nbytes = int64_t(dtype_size(*dtype));
  for (const json& d : shape_json) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() > uint64_t(INT64_MAX))
      return bad("shape entries must be non-negative integers");
    shape.push_back(int64_t(d.get<uint64_t>()));
    if (__builtin_mul_overflow(nbytes, shape.back(), &nbytes)) return bad("shape is too large");
  }
  if (!info.contains("data_offsets") || !info["data_offsets"].is_array() ||
      info["data_offsets"].size() != 2 || !info["data_offsets"][0].is_number_unsigned() ||
      !info["data_offsets"][1].is_number_unsigned())
    return bad("'data_offsets' must be two non-negative integers");
  const uint64_t begin = info["data_offsets"][0].get<uint64_t>();
  const uint64_t end = info["data_offsets"][1].get<uint64_t>();
  if (begin > end || end > data.size())
    return bad("data offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
               "] lie outside the " + std::to_string(data.size()) + "-byte data section");
  if (end - begin != uint64_t(nbytes))
    return bad("holds " + std::to_string(end - begin) + " bytes but its shape needs " +
               std::to_string(nbytes));
  SG_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(*dtype, shape));
  if (nbytes > 0) std::memcpy(t.data(), data.data() + begin, size_t(nbytes));
  if (*dtype == DType::kBool) {
    uint8_t* b = t.data_as<uint8_t>();
    for (int64_t i = 0; i < nbytes; ++i) b[i] = b[i] != 0;
  }
  return t;
}

}  // namespace

Result<std::vector<std::pair<std::string, Tensor>>> parse_safetensors(
    std::span<const uint8_t> bytes) {
  if (bytes.size() < 8) return invalid_input("not a safetensors file (shorter than 8 bytes)");
  uint64_t header_size = 0;
  for (int i = 0; i < 8; ++i) header_size |= uint64_t(bytes[size_t(i)]) << (8 * i);
  if (header_size > bytes.size() - 8)
    return invalid_input("not a safetensors file (header of " + std::to_string(header_size) +
                         " bytes announced, file has " + std::to_string(bytes.size()) + ")");
  const auto* header_begin = reinterpret_cast<const char*>(bytes.data() + 8);
  const json header = json::parse(header_begin, header_begin + header_size, nullptr,
                                  /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object())
    return invalid_input("the safetensors header is not a JSON object");
  const std::span<const uint8_t> data = bytes.subspan(8 + header_size);

  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") continue;
    SG_ASSIGN_OR_RETURN(Tensor t, read_entry(name, info, data));
    tensors.emplace_back(name, std::move(t));
  }
  std::sort(tensors.begin(), tensors.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return tensors;
}

Result<std::vector<std::pair<std::string, Tensor>>> read_safetensors(const std::string& path) {
  SG_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, read_file_bytes(path));
  auto tensors = parse_safetensors(bytes);
  if (!tensors.ok()) return tensors.status().with_context(path);
  return tensors;
}

}  // namespace sg::tools
