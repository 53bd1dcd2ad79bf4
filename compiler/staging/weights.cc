// sg.weight("name") (SPEC §2): a tensor of the safetensors file given with
// --weights, read at compile time and baked into the graph as a constant.
// Layout: u64 little-endian header size, a JSON header
// {"name": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, ...},
// then the data (offsets relative to its start).
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "staging/weights.h"

namespace sg::compiler::staging {
namespace {

std::optional<DType> safetensors_dtype(const std::string& s) {
  if (s == "F32") return DType::kF32;
  if (s == "F16") return DType::kF16;
  if (s == "I32") return DType::kI32;
  if (s == "I64") return DType::kI64;
  if (s == "BOOL") return DType::kBool;
  return std::nullopt;
}

}  // namespace

Status WeightsFile::open(const std::string& path) {
  path_ = path;
  std::ifstream in(path, std::ios::binary);
  if (!in) return invalid_argument("cannot open the weights file '" + path + "'");
  uint8_t size_bytes[8];
  if (!in.read(reinterpret_cast<char*>(size_bytes), 8))
    return invalid_argument("the weights file '" + path + "' is too short to be a safetensors file");
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | size_bytes[i];
  in.seekg(0, std::ios::end);
  const uint64_t file_size = uint64_t(in.tellg());
  if (header_size > file_size - 8 || header_size > (uint64_t(100) << 20))
    return invalid_argument("the weights file '" + path + "' has a bad header size");
  std::string header(size_t(header_size), '\0');
  in.seekg(8);
  in.read(header.data(), std::streamsize(header_size));
  data_offset_ = 8 + header_size;
  const uint64_t data_size = file_size - data_offset_;
  nlohmann::json j = nlohmann::json::parse(header, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return invalid_argument("the weights file '" + path + "' has a malformed JSON header");
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const nlohmann::json& t = it.value();
    Entry e;
    const std::string bad = "the weights file '" + path + "': tensor '" + it.key() + "' ";
    if (!t.is_object() || !t.contains("dtype") || !t["dtype"].is_string() || !t.contains("shape") ||
        !t["shape"].is_array() || !t.contains("data_offsets") || !t["data_offsets"].is_array() ||
        t["data_offsets"].size() != 2)
      return invalid_argument(bad + "has a malformed entry");
    e.dtype_name = t["dtype"].get<std::string>();
    for (const auto& d : t["shape"]) {
      if (!d.is_number_unsigned()) return invalid_argument(bad + "has a bad shape");
      e.shape.push_back(d.get<int64_t>());
    }
    if (!t["data_offsets"][0].is_number_unsigned() || !t["data_offsets"][1].is_number_unsigned())
      return invalid_argument(bad + "has bad data offsets");
    e.begin = t["data_offsets"][0].get<uint64_t>();
    e.end = t["data_offsets"][1].get<uint64_t>();
    if (e.begin > e.end || e.end > data_size) return invalid_argument(bad + "lies outside the data");
    entries_[it.key()] = std::move(e);
  }
  return Status::Ok();
}

Result<StaticTensorPtr> WeightsFile::read(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) return invalid_argument("the weights file '" + path_ + "' has no tensor '" + name + "'");
  const Entry& e = it->second;
  std::optional<DType> dt = safetensors_dtype(e.dtype_name);
  if (!dt) return invalid_argument("weight '" + name + "' has dtype " + e.dtype_name + ", which graphs do not support");
  auto t = std::make_shared<StaticTensor>();
  if (e.shape.size() > 8)
    return invalid_argument("weight '" + name + "' has rank " + std::to_string(e.shape.size()) +
                            ", more than the 8 graphs support");
  int64_t nbytes = int64_t(dtype_size(*dt));
  for (int64_t d : e.shape)
    if (d < 0 || __builtin_mul_overflow(nbytes, d, &nbytes))
      return invalid_argument("weight '" + name + "': its shape is too large");
  if (uint64_t(nbytes) != e.end - e.begin)
    return invalid_argument("weight '" + name + "': its shape does not match its data size");
  t->dtype = *dt;
  t->shape = e.shape;
  t->bytes.resize(size_t(e.end - e.begin));
  std::ifstream in(path_, std::ios::binary);
  in.seekg(std::streamoff(data_offset_ + e.begin));
  if (!in.read(reinterpret_cast<char*>(t->bytes.data()), std::streamsize(t->bytes.size())))
    return invalid_argument("cannot read weight '" + name + "' from '" + path_ + "'");
  return StaticTensorPtr(t);
}

}  // namespace sg::compiler::staging
