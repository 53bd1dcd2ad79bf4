// safetensors for a Session's variables (SPEC §12): an 8-byte little-endian header
// length, a JSON header {"name": {"dtype", "shape", "data_offsets"}, ...}, then the
// data. The writer writes to a temporary file beside the target and renames it into
// place, so a crash leaves the old file or the new one. The reader parses only what
// this format needs, and checks every offset against the file's length.
#include "safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace sg::runtime {

namespace {

const char* const kNames[kNumDTypes] = {"F32", "F16", "I32", "I64", "BOOL"};

std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

Status io_error(const std::string& what, const std::string& path) {
  return Status(StatusCode::kInvalidArgument, what + " '" + path + "': " + std::strerror(errno));
}

Status write_all(int fd, const void* data, size_t n, const std::string& path) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return io_error("cannot write", path);
    p += w;
    n -= size_t(w);
  }
  return Status::Ok();
}

// A cursor over the JSON header, for the shapes safetensors headers take.
struct Json {
  std::string_view s;
  size_t at = 0;
  bool ok = true;

  void space() {
    while (at < s.size() && (s[at] == ' ' || s[at] == '\n' || s[at] == '\t' || s[at] == '\r')) ++at;
  }
  bool eat(char c) {
    space();
    if (at < s.size() && s[at] == c) {
      ++at;
      return true;
    }
    return false;
  }
  void expect(char c) { ok = ok && eat(c); }
  std::string string() {
    std::string out;
    if (!eat('"')) {
      ok = false;
      return out;
    }
    while (at < s.size() && s[at] != '"') {
      if (s[at] == '\\' && at + 1 < s.size()) ++at;
      out += s[at++];
    }
    ok = ok && at < s.size();
    ++at;
    return out;
  }
  int64_t number() {
    space();
    int64_t v = 0;
    const size_t start = at;
    while (at < s.size() && s[at] >= '0' && s[at] <= '9' && v < (int64_t(1) << 56)) v = v * 10 + (s[at++] - '0');
    ok = ok && at > start;
    return v;
  }
  std::vector<int64_t> numbers() {
    std::vector<int64_t> out;
    expect('[');
    if (eat(']')) return out;
    do out.push_back(number());
    while (ok && eat(','));
    expect(']');
    return out;
  }
  // Skips any value (the __metadata__ object's).
  void skip() {
    space();
    if (at < s.size() && s[at] == '"') {
      string();
      return;
    }
    int depth = 0;
    for (; at < s.size(); ++at) {
      const char c = s[at];
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        if (depth == 0) return;
        --depth;
      }
      if (c == ',' && depth == 0) return;
    }
  }
};

}  // namespace

Status write_safetensors(const std::string& path, const std::vector<NamedTensor>& tensors) {
  std::string header = "{";
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i].tensor;
    header += (i ? "," : "") + quoted(tensors[i].name) + ":{\"dtype\":\"" + kNames[int(t.dtype())] + "\",\"shape\":[";
    for (int d = 0; d < t.rank(); ++d) header += (d ? "," : "") + std::to_string(t.dim(d));
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + t.nbytes()) + "]}";
    offset += t.nbytes();
  }
  header += "}";
  while (header.size() % 8 != 0) header += ' ';
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("cannot create", tmp);
  uint8_t size[8];
  for (int b = 0; b < 8; ++b) size[b] = uint8_t(uint64_t(header.size()) >> (8 * b));
  Status s = write_all(fd, size, 8, tmp);
  if (s.ok()) s = write_all(fd, header.data(), header.size(), tmp);
  for (size_t i = 0; i < tensors.size() && s.ok(); ++i)
    s = write_all(fd, tensors[i].tensor.data(), tensors[i].tensor.nbytes(), tmp);
  if (s.ok() && ::fsync(fd) != 0) s = io_error("cannot flush", tmp);
  ::close(fd);
  if (s.ok() && std::rename(tmp.c_str(), path.c_str()) != 0) s = io_error("cannot rename the saved file to", path);
  if (!s.ok()) ::unlink(tmp.c_str());
  return s;
}

Result<std::vector<NamedTensor>> read_safetensors(const std::string& path, Allocator* allocator) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status(StatusCode::kNotFound, "cannot open '" + path + "': " + std::strerror(errno));
  struct stat st {};
  std::string bytes;
  if (::fstat(fd, &st) == 0 && st.st_size >= 0) {
    bytes.resize(size_t(st.st_size));
    size_t got = 0;
    while (got < bytes.size()) {
      const ssize_t r = ::read(fd, bytes.data() + got, bytes.size() - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      got += size_t(r);
    }
    bytes.resize(got);
  }
  ::close(fd);
  auto bad = [&](const std::string& why) {
    return Status(StatusCode::kInvalidArgument, "'" + path + "' is not a safetensors file: " + why);
  };
  if (bytes.size() < 8) return bad("shorter than its header");
  uint64_t n = 0;
  for (int b = 7; b >= 0; --b) n = (n << 8) | uint8_t(bytes[size_t(b)]);
  if (n > bytes.size() - 8) return bad("its header runs past the end");
  Json j{std::string_view(bytes).substr(8, size_t(n))};
  const std::string_view data = std::string_view(bytes).substr(8 + size_t(n));
  std::vector<NamedTensor> out;
  j.expect('{');
  if (j.eat('}')) return out;
  do {
    const std::string name = j.string();
    j.expect(':');
    if (name == "__metadata__") {
      j.skip();
      continue;
    }
    std::string dtype;
    std::vector<int64_t> shape, offsets;
    j.expect('{');
    do {
      const std::string key = j.string();
      j.expect(':');
      if (key == "dtype") dtype = j.string();
      else if (key == "shape") shape = j.numbers();
      else if (key == "data_offsets") offsets = j.numbers();
      else j.skip();
    } while (j.ok && j.eat(','));
    j.expect('}');
    if (!j.ok) return bad("its header does not parse near byte " + std::to_string(j.at));
    int code = -1;
    for (int k = 0; k < kNumDTypes; ++k)
      if (dtype == kNames[k]) code = k;
    if (code < 0) return bad("tensor '" + name + "' has dtype '" + dtype + "', which Stagegraph does not hold");
    if (offsets.size() != 2 || offsets[0] > offsets[1] || uint64_t(offsets[1]) > data.size() || shape.size() > 8)
      return bad("tensor '" + name + "' has data offsets outside the file");
    SG_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(DType(code), Span<const int64_t>(shape), allocator));
    if (t.nbytes() != uint64_t(offsets[1] - offsets[0]))
      return bad("tensor '" + name + "' holds " + std::to_string(offsets[1] - offsets[0]) + " bytes for its shape's " +
                 std::to_string(t.nbytes()));
    if (t.nbytes() > 0) std::memcpy(t.data(), data.data() + offsets[0], t.nbytes());
    out.push_back(NamedTensor{name, std::move(t)});
  } while (j.ok && j.eat(','));
  j.expect('}');
  if (!j.ok) return bad("its header does not parse near byte " + std::to_string(j.at));
  return out;
}

}  // namespace sg::runtime
