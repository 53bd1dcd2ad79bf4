// sg.weight("name") (SPEC §2): a tensor of the safetensors file given with
// --weights, read at compile time and baked into the graph as a constant.
// Layout: u64 little-endian header size, a JSON header
// {"name": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, ...},
// then the data (offsets relative to its start). Every field is checked before any
// byte of data is touched.
#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "staging/weights.h"

namespace sg::compiler::staging {
namespace {

using nlohmann::json;

// The safetensors format limits its header to 100 MB; a real one holds a flat
// object of tensors, each an object with flat arrays (depth 3).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
constexpr int kMaxJsonNesting = 64;

// The deepest nesting of arrays and objects in `text` (strings skipped), found
// without recursion, so that a hostile header is refused before it is parsed.
int json_nesting(std::span<const char> text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

std::optional<DType> dtype_from_safetensors(const std::string& s) {
  if (s == "F32") return DType::kF32;
  if (s == "F16") return DType::kF16;
  if (s == "I32") return DType::kI32;
  if (s == "I64") return DType::kI64;
  if (s == "BOOL") return DType::kBool;
  return std::nullopt;
}

Result<WeightEntry> parse_entry(const std::string& name, const json& info, uint64_t data_size) {
  const auto bad = [&](const std::string& what) { return invalid_input("tensor '" + name + "': " + what); };
  if (!info.is_object()) return bad("header entry is not an object");
  if (!info.contains("dtype") || !info["dtype"].is_string()) return bad("missing 'dtype'");
  const std::string dtype_text = info["dtype"].get<std::string>();
  const std::optional<DType> dtype = dtype_from_safetensors(dtype_text);
  if (!dtype) return bad("unsupported dtype '" + dtype_text + "' (expected F32, F16, I32, I64 or BOOL)");
  if (!info.contains("shape") || !info["shape"].is_array()) return bad("missing 'shape'");
  const json& shape_json = info["shape"];
  if (shape_json.size() > kMaxWeightRank)
    return bad("rank " + std::to_string(shape_json.size()) + " exceeds the maximum of " +
               std::to_string(kMaxWeightRank));
  WeightEntry e;
  e.dtype = *dtype;
  int64_t nbytes = int64_t(dtype_size(*dtype));
  for (const json& d : shape_json) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() > uint64_t(INT64_MAX))
      return bad("shape entries must be non-negative integers");
    e.shape.push_back(int64_t(d.get<uint64_t>()));
    if (__builtin_mul_overflow(nbytes, e.shape.back(), &nbytes)) return bad("shape is too large");
  }
  const json* offsets = info.contains("data_offsets") ? &info["data_offsets"] : nullptr;
  if (!offsets || !offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
      !(*offsets)[1].is_number_unsigned())
    return bad("'data_offsets' must be two non-negative integers");
  e.begin = (*offsets)[0].get<uint64_t>();
  e.end = (*offsets)[1].get<uint64_t>();
  if (e.begin > e.end || e.end > data_size)
    return bad("data offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "] lie outside the " +
               std::to_string(data_size) + "-byte data section");
  if (e.end - e.begin != uint64_t(nbytes))
    return bad("holds " + std::to_string(e.end - e.begin) + " bytes but its shape needs " + std::to_string(nbytes));
  return e;
}

}  // namespace

Result<std::map<std::string, WeightEntry>> parse_safetensors_header(std::span<const char> header,
                                                                    uint64_t data_size) {
  if (json_nesting(header) > kMaxJsonNesting)
    return invalid_input("the safetensors header nests arrays or objects more than " +
                         std::to_string(kMaxJsonNesting) + " deep");
  const json j = json::parse(header.begin(), header.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return invalid_input("the safetensors header is not a JSON object");
  std::map<std::string, WeightEntry> entries;
  for (const auto& [name, info] : j.items()) {
    if (name == "__metadata__") continue;
    SG_ASSIGN_OR_RETURN(WeightEntry e, parse_entry(name, info, data_size));
    entries.emplace(name, std::move(e));
  }
  return entries;
}

Status WeightsFile::open(const std::string& path) {
  path_ = path;
  const std::string where = "the weights file '" + path + "'";
  std::ifstream in(path, std::ios::binary);
  if (!in) return invalid_input("cannot open " + where);
  in.seekg(0, std::ios::end);
  const uint64_t file_size = uint64_t(in.tellg());
  in.seekg(0);
  uint8_t size_bytes[8];
  if (file_size < 8 || !in.read(reinterpret_cast<char*>(size_bytes), 8))
    return invalid_input(where + " is not a safetensors file (shorter than 8 bytes)");
  uint64_t header_size = 0;
  for (int i = 0; i < 8; ++i) header_size |= uint64_t(size_bytes[i]) << (8 * i);
  if (header_size > kMaxHeaderBytes && header_size <= file_size - 8)
    return invalid_input(where + ": its header of " + std::to_string(header_size) +
                         " bytes is over the format's limit of " + std::to_string(kMaxHeaderBytes));
  if (header_size > file_size - 8)
    return invalid_input(where + " is not a safetensors file (header of " + std::to_string(header_size) +
                         " bytes announced, file has " + std::to_string(file_size) + ")");
  std::string header(size_t(header_size), '\0');
  if (!in.read(header.data(), std::streamsize(header_size))) return invalid_input("cannot read " + where);
  data_offset_ = 8 + header_size;
  auto entries = parse_safetensors_header(header, file_size - data_offset_);
  if (!entries.ok()) return invalid_input(where + ": " + entries.status().message());
  entries_ = std::move(*entries);
  return Status::Ok();
}

Result<StaticTensorPtr> WeightsFile::read(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) return invalid_input("the weights file '" + path_ + "' has no tensor '" + name + "'");
  const WeightEntry& e = it->second;
  auto t = std::make_shared<StaticTensor>();
  t->dtype = e.dtype;
  t->shape = e.shape;
  t->bytes.resize(size_t(e.end - e.begin));
  std::ifstream in(path_, std::ios::binary);
  in.seekg(std::streamoff(data_offset_ + e.begin));
  if (!in.read(reinterpret_cast<char*>(t->bytes.data()), std::streamsize(t->bytes.size())))
    return invalid_input("cannot read weight '" + name + "' from '" + path_ + "'");
  // safetensors stores a bool as one byte; the graph holds only 0 and 1.
  if (e.dtype == DType::kBool)
    for (uint8_t& b : t->bytes) b = b != 0;
  return StaticTensorPtr(t);
}

}  // namespace sg::compiler::staging
