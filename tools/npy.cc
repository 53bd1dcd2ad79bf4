// .npy reading and writing. The header is a Python dict literal; we parse the small
// subset NumPy writes (strings, True/False, tuples of ints) by hand and reject the
// rest with a message instead of guessing.
#include "npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string_view>

namespace sg::tools {
namespace {

// .npy data is little-endian and so is every target we build for; a big-endian
// host would need byte swapping here.
static_assert(std::endian::native == std::endian::little, "npy I/O assumes a little-endian host");

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// NumPy writes flat tuples (depth 1) and, for structured dtypes, lists of tuples
// (depth 3); deeper nesting is refused before it can exhaust the parser's stack.
constexpr int kMaxHeaderNesting = 16;
// np.load refuses headers over 10,000 bytes by default; ours are a few dozen. A
// header length up to 4 GiB would otherwise be read into memory before parsing.
constexpr size_t kMaxHeaderBytes = size_t(1) << 20;
// How much of a malformed header a message quotes.
constexpr size_t kQuotedHeaderBytes = 200;

struct HeaderValue {
  enum class Kind { kString, kBool, kTuple, kList, kInt, kNone };
  Kind kind = Kind::kNone;
  std::string text;
  bool flag = false;
  std::vector<int64_t> items;
  bool all_ints = true;  // for sequences: every item was an int
};

// A recursive-descent reader for the dict literal of a .npy header.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  Status parse(std::vector<std::pair<std::string, HeaderValue>>* out) {
    skip_space();
    if (!eat('{')) return fail("expected '{'");
    while (true) {
      skip_space();
      if (eat('}')) break;
      HeaderValue key;
      SG_RETURN_IF_ERROR(parse_value(&key));
      if (key.kind != HeaderValue::Kind::kString) return fail("dict keys must be strings");
      skip_space();
      if (!eat(':')) return fail("expected ':' after key '" + key.text + "'");
      HeaderValue value;
      SG_RETURN_IF_ERROR(parse_value(&value));
      for (const auto& [k, v] : *out)
        if (k == key.text) return fail("duplicate key '" + key.text + "'");
      out->emplace_back(key.text, std::move(value));
      skip_space();
      if (eat(',')) continue;
      skip_space();
      if (eat('}')) break;
      return fail("expected ',' or '}'");
    }
    skip_space();
    if (pos_ != text_.size()) return fail("unexpected text after the dict");
    return Status::Ok();
  }

 private:
  Status fail(const std::string& what) const {
    std::string quoted(text_.substr(0, kQuotedHeaderBytes));
    if (text_.size() > kQuotedHeaderBytes) quoted += "...";
    return invalid_input("malformed .npy header (" + what + " at offset " +
                         std::to_string(pos_) + "): " + quoted);
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool eat(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool eat_word(std::string_view w) {
    if (text_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }

  Status parse_value(HeaderValue* v) {
    skip_space();
    if (pos_ >= text_.size()) return fail("unexpected end");
    const char c = text_[pos_];
    if (c == '\'' || c == '"') {
      ++pos_;
      const size_t end = text_.find(c, pos_);
      if (end == std::string_view::npos) return fail("unterminated string");
      v->kind = HeaderValue::Kind::kString;
      v->text = std::string(text_.substr(pos_, end - pos_));
      pos_ = end + 1;
      return Status::Ok();
    }
    for (const bool flag : {true, false}) {
      if (eat_word(flag ? "True" : "False")) {
        v->kind = HeaderValue::Kind::kBool;
        v->flag = flag;
        return Status::Ok();
      }
    }
    if (eat_word("None")) return Status::Ok();
    if (c == '(' || c == '[') return parse_sequence(v);
    if (c >= '0' && c <= '9') {
      v->kind = HeaderValue::Kind::kInt;
      int64_t n = 0;
      SG_RETURN_IF_ERROR(parse_int(&n));
      v->items.push_back(n);
      return Status::Ok();
    }
    if (c == '-') return fail("negative number");
    return fail(std::string("unexpected character '") + c + "'");
  }

  // Tuples of non-negative ints are what shapes need; other sequences (a structured
  // dtype's descr) are recorded as such so the caller can name the problem.
  Status parse_sequence(HeaderValue* v) {
    if (depth_ >= kMaxHeaderNesting)
      return fail("tuples or lists nested more than " + std::to_string(kMaxHeaderNesting) + " deep");
    ++depth_;
    Status s = parse_sequence_items(v);
    --depth_;
    return s;
  }

  Status parse_sequence_items(HeaderValue* v) {
    const char close = text_[pos_] == '(' ? ')' : ']';
    v->kind = close == ')' ? HeaderValue::Kind::kTuple : HeaderValue::Kind::kList;
    ++pos_;
    while (true) {
      skip_space();
      if (eat(close)) return Status::Ok();
      HeaderValue item;
      SG_RETURN_IF_ERROR(parse_value(&item));
      if (item.kind == HeaderValue::Kind::kInt) {
        v->items.push_back(item.items[0]);
      } else {
        v->all_ints = false;
      }
      skip_space();
      if (eat(',')) continue;
      skip_space();
      if (eat(close)) return Status::Ok();
      return fail(std::string("expected ',' or '") + close + "'");
    }
  }

  Status parse_int(int64_t* out) {
    uint64_t n = 0;
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const uint64_t digit = uint64_t(text_[pos_] - '0');
      if (n > (uint64_t(INT64_MAX) - digit) / 10)
        return invalid_input("shape entry " + std::string(text_.substr(start, 24)) +
                             "... does not fit in 64 bits");
      n = n * 10 + digit;
      ++pos_;
    }
    eat('L');  // Python 2 longs, still found in old files
    *out = int64_t(n);
    return Status::Ok();
  }

  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;  // sequences open around the current position
};

std::optional<DType> dtype_from_descr(std::string_view d) {
  if (d == "<f4") return DType::kF32;
  if (d == "<f2") return DType::kF16;
  if (d == "<i4") return DType::kI32;
  if (d == "<i8") return DType::kI64;
  if (d == "|b1" || d == "<b1" || d == "=b1") return DType::kBool;
  return std::nullopt;
}

const char* descr_of(DType t) {
  switch (t) {
    case DType::kF32: return "<f4";
    case DType::kF16: return "<f2";
    case DType::kI32: return "<i4";
    case DType::kI64: return "<i8";
    case DType::kBool: return "|b1";
  }
  return "?";
}

Status check_descr(std::string_view d) {
  if (dtype_from_descr(d)) return Status::Ok();
  const std::string q = "'" + std::string(d) + "'";
  if (d.size() >= 2 && d[0] == '>' && dtype_from_descr(std::string("<") + std::string(d.substr(1))))
    return invalid_input("big-endian data (dtype " + q + ") is not supported; save it little-endian");
  if (d.size() >= 2 && d[1] == 'O') return invalid_input("object arrays (dtype " + q + ") are not supported");
  return invalid_input("unsupported dtype " + q +
                       " (expected one of '<f4', '<f2', '<i4', '<i8', '|b1')");
}

uint32_t read_le(const uint8_t* p, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint32_t(p[i]) << (8 * i);
  return v;
}

// Bools are 0 or 1 everywhere in the runtime.
void normalize_bools(Tensor& t) {
  if (t.dtype() != DType::kBool) return;
  uint8_t* b = t.data_as<uint8_t>();
  for (size_t i = 0; i < t.nbytes(); ++i) b[i] = b[i] != 0;
}

// What a .npy header says: the array's dtype and shape and where its data lies.
struct NpyLayout {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  size_t data_offset = 0;
  uint64_t nbytes = 0;
};

// The header of a .npy image; `bytes` need only reach the end of the header.
Result<NpyLayout> parse_npy_header(std::span<const uint8_t> bytes) {
  if (bytes.size() < kMagicSize || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0)
    return invalid_input("not a .npy file (bad magic)");
  if (bytes.size() < kMagicSize + 2) return invalid_input("truncated .npy header");
  const uint8_t major = bytes[6], minor = bytes[7];
  if (major < 1 || major > 3 || minor != 0)
    return invalid_input("unsupported .npy format version " + std::to_string(major) + "." +
                         std::to_string(minor) + " (expected 1.0, 2.0 or 3.0)");
  const size_t len_size = major == 1 ? 2 : 4;
  const size_t prelude = kMagicSize + 2 + len_size;
  if (bytes.size() < prelude) return invalid_input("truncated .npy header");
  const size_t header_len = read_le(bytes.data() + 8, len_size);
  if (header_len > kMaxHeaderBytes)
    return invalid_input("the .npy header announces " + std::to_string(header_len) +
                         " bytes, over the limit of " + std::to_string(kMaxHeaderBytes));
  if (bytes.size() - prelude < header_len)
    return invalid_input("truncated .npy header (" + std::to_string(header_len) +
                         " header bytes announced, " + std::to_string(bytes.size() - prelude) +
                         " present)");
  const std::string_view header(reinterpret_cast<const char*>(bytes.data() + prelude), header_len);

  std::vector<std::pair<std::string, HeaderValue>> dict;
  SG_RETURN_IF_ERROR(HeaderParser(header).parse(&dict));
  const HeaderValue* descr = nullptr;
  const HeaderValue* fortran = nullptr;
  const HeaderValue* shape = nullptr;
  for (const auto& [key, value] : dict) {
    if (key == "descr") descr = &value;
    else if (key == "fortran_order") fortran = &value;
    else if (key == "shape") shape = &value;
    else return invalid_input("unexpected key '" + key + "' in .npy header");
  }
  if (!descr || !fortran || !shape)
    return invalid_input("the .npy header lacks one of 'descr', 'fortran_order', 'shape'");
  if (descr->kind == HeaderValue::Kind::kList)
    return invalid_input("structured arrays are not supported");
  if (descr->kind != HeaderValue::Kind::kString)
    return invalid_input("the .npy header's 'descr' is not a string");
  if (fortran->kind != HeaderValue::Kind::kBool)
    return invalid_input("the .npy header's 'fortran_order' is not True or False");
  if (shape->kind != HeaderValue::Kind::kTuple || !shape->all_ints)
    return invalid_input("the .npy header's 'shape' is not a tuple of integers");
  SG_RETURN_IF_ERROR(check_descr(descr->text));
  const DType dtype = *dtype_from_descr(descr->text);
  if (shape->items.size() > size_t(kMaxRank))
    return invalid_input("rank " + std::to_string(shape->items.size()) +
                         " exceeds the maximum of " + std::to_string(kMaxRank));

  // The byte count is checked for overflow before it is compared with the file.
  int64_t nbytes = int64_t(dtype_size(dtype));
  for (int64_t d : shape->items)
    if (__builtin_mul_overflow(nbytes, d, &nbytes))
      return invalid_input("the shape in the .npy header is too large (size overflows)");
  if (fortran->flag)
    return invalid_input("Fortran-order arrays are not supported; save it in C order "
                         "(numpy.ascontiguousarray)");
  return NpyLayout{dtype, shape->items, prelude + header_len, uint64_t(nbytes)};
}

}  // namespace

Result<Tensor> parse_npy(std::span<const uint8_t> bytes) {
  SG_ASSIGN_OR_RETURN(const NpyLayout layout, parse_npy_header(bytes));
  const uint64_t nbytes = layout.nbytes;
  const size_t available = bytes.size() - layout.data_offset;
  if (available < nbytes)
    return invalid_input("truncated .npy data: " + std::to_string(nbytes) + " bytes expected, " +
                         std::to_string(available) + " present");
  if (available > nbytes)
    return invalid_input(std::to_string(available - nbytes) + " unexpected bytes after the .npy data");

  SG_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(layout.dtype, layout.shape));
  const uint8_t* data = bytes.data() + layout.data_offset;
  if (nbytes > 0) std::memcpy(t.data(), data, size_t(nbytes));
  normalize_bools(t);
  return t;
}

namespace {

// Opens `path` for reading; kInvalidInput naming it when it cannot.
Status open_input(const std::string& path, std::ifstream* in) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return invalid_input(path + ": is a directory, not a file");
  in->open(path, std::ios::binary);
  if (!*in) return invalid_input(path + ": cannot open file: " + std::strerror(errno));
  return Status::Ok();
}

// Appends what `in` holds to `bytes` until they reach `limit` bytes or the stream
// ends, in chunks: a pipe or a device has no size to ask for.
Status read_up_to(const std::string& path, std::ifstream& in, size_t limit, std::vector<uint8_t>* bytes) {
  char chunk[1 << 16];
  while (bytes->size() < limit && in) {
    in.read(chunk, std::streamsize(std::min(sizeof chunk, limit - bytes->size())));
    bytes->insert(bytes->end(), chunk, chunk + in.gcount());
  }
  if (in.bad()) return invalid_input(path + ": cannot read file");
  return Status::Ok();
}

// How many leading bytes of a .npy image parse_npy_header needs, judging by the
// `bytes` read so far: the magic and version, then the header length, then the
// header; no more than `bytes` hold when those show no .npy file.
size_t npy_header_wants(std::span<const uint8_t> bytes) {
  const size_t fixed = kMagicSize + 2;
  if (bytes.size() < fixed) return fixed;
  if (std::memcmp(bytes.data(), kMagic, kMagicSize) != 0) return bytes.size();
  const size_t len_size = bytes[6] == 1 ? 2 : 4;
  if (bytes.size() < fixed + len_size) return fixed + len_size;
  const size_t header_len = read_le(bytes.data() + fixed, len_size);
  if (header_len > kMaxHeaderBytes) return bytes.size();  // parse_npy_header says why
  return fixed + len_size + header_len;
}

}  // namespace

Result<std::vector<uint8_t>> read_file_bytes(const std::string& path) {
  std::ifstream in;
  SG_RETURN_IF_ERROR(open_input(path, &in));
  std::vector<uint8_t> bytes;
  std::error_code ec;
  // A file's size, where known, saves the vector's regrowth.
  if (const uintmax_t size = std::filesystem::file_size(path, ec); !ec) bytes.reserve(size_t(size));
  SG_RETURN_IF_ERROR(read_up_to(path, in, SIZE_MAX, &bytes));
  return bytes;
}

Result<Tensor> read_npy(const std::string& path) {
  // Reads the prelude, the header it announces, then the data that header describes
  // straight into the tensor, and looks one byte further for trailing bytes: never
  // more, since a device or a pipe need not end (--input x=/dev/zero), and never
  // a second copy of a large input.
  std::ifstream in;
  SG_RETURN_IF_ERROR(open_input(path, &in));
  std::vector<uint8_t> head;
  for (size_t want = npy_header_wants(head); want > head.size(); want = npy_header_wants(head)) {
    SG_RETURN_IF_ERROR(read_up_to(path, in, want, &head));
    if (head.size() < want) break;  // the file ends early: parse_npy_header says where
  }
  // On success `head` ends where the data begins.
  Result<NpyLayout> layout = parse_npy_header(head);
  if (!layout.ok()) return layout.status().with_context(path);
  // A file too short for the shape it announces is refused before the tensor is
  // allocated (a corrupt header can announce terabytes).
  std::error_code ec;
  if (const uintmax_t size = std::filesystem::file_size(path, ec);
      !ec && size >= layout->data_offset && size - layout->data_offset < layout->nbytes)
    return invalid_input(path + ": truncated .npy data: " + std::to_string(layout->nbytes) + " bytes expected, " +
                         std::to_string(size - layout->data_offset) + " present");
  Result<Tensor> t = Tensor::empty(layout->dtype, layout->shape);
  if (!t.ok()) return t.status().with_context(path);
  in.read(reinterpret_cast<char*>(t->data()), std::streamsize(layout->nbytes));
  const uint64_t got = uint64_t(in.gcount());
  if (in.bad()) return invalid_input(path + ": cannot read file");
  if (got < layout->nbytes)
    return invalid_input(path + ": truncated .npy data: " + std::to_string(layout->nbytes) + " bytes expected, " +
                         std::to_string(got) + " present");
  if (in.peek() != std::ifstream::traits_type::eof())
    return invalid_input(path + ": unexpected bytes after the .npy data (its header's shape accounts for " +
                         std::to_string(layout->nbytes) + " bytes)");
  normalize_bools(*t);
  return t;
}

std::vector<uint8_t> encode_npy(const Tensor& t) {
  std::string header = "{'descr': '" + std::string(descr_of(t.dtype())) +
                       "', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < t.rank(); ++i) {
    header += std::to_string(t.dim(i));
    if (i + 1 < t.rank() || t.rank() == 1) header += ",";
    if (i + 1 < t.rank()) header += " ";
  }
  header += "), }";
  // Magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
  const size_t prelude = kMagicSize + 4;
  const size_t total = (prelude + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prelude - header.size() - 1, ' ');
  header += '\n';

  std::vector<uint8_t> out(total + t.nbytes());
  std::memcpy(out.data(), kMagic, kMagicSize);
  out[6] = 1;
  out[7] = 0;
  out[8] = uint8_t(header.size() & 0xFF);
  out[9] = uint8_t(header.size() >> 8);
  std::memcpy(out.data() + prelude, header.data(), header.size());
  if (t.nbytes() > 0) std::memcpy(out.data() + total, t.data(), t.nbytes());
  return out;
}

Status write_npy(const std::string& path, const Tensor& t, bool* replaced) {
  if (replaced) *replaced = false;
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode))
      return invalid_argument(path + ": is a symbolic link; outputs are never written through one (remove it)");
    if (!S_ISREG(st.st_mode)) return invalid_argument(path + ": exists and is not a regular file");
    if (replaced) *replaced = true;
  }
  // O_NOFOLLOW: a link made after the check above is refused too; O_NONBLOCK: a
  // FIFO put there meanwhile does not block the open, and fstat refuses it.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
  if (fd < 0) {
    if (errno == ELOOP)
      return invalid_argument(path + ": is a symbolic link; outputs are never written through one (remove it)");
    return invalid_argument(path + ": cannot create file: " + std::strerror(errno));
  }
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return invalid_argument(path + ": exists and is not a regular file");
  }
  const std::vector<uint8_t> bytes = encode_npy(t);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += size_t(n);
  }
  const int write_errno = errno;
  if (::close(fd) != 0 || done != bytes.size())
    return invalid_argument(path + ": write failed: " + std::strerror(done != bytes.size() ? write_errno : errno));
  return Status::Ok();
}

std::string describe(const Tensor& t) {
  std::string s = std::string(dtype_name(t.dtype())) + "[";
  for (int i = 0; i < t.rank(); ++i) {
    if (i) s += ", ";
    s += std::to_string(t.dim(i));
  }
  return s + "]";
}

std::string format_values(const Tensor& t, size_t max_items) {
  const size_t n = size_t(t.numel());
  const size_t shown = std::min(n, max_items);
  std::string s;
  char buf[32];
  for (size_t i = 0; i < shown; ++i) {
    if (i) s += ", ";
    switch (t.dtype()) {
      case DType::kF32: std::snprintf(buf, sizeof buf, "%.4g", double(t.data_as<float>()[i])); break;
      case DType::kF16:
        std::snprintf(buf, sizeof buf, "%.4g", double(half_to_float(t.data_as<uint16_t>()[i])));
        break;
      case DType::kI32: std::snprintf(buf, sizeof buf, "%" PRId32, t.data_as<int32_t>()[i]); break;
      case DType::kI64: std::snprintf(buf, sizeof buf, "%" PRId64, t.data_as<int64_t>()[i]); break;
      case DType::kBool: std::snprintf(buf, sizeof buf, "%s", t.data_as<uint8_t>()[i] ? "True" : "False"); break;
    }
    s += buf;
  }
  if (t.rank() == 0) return s;
  if (shown < n) s += shown ? ", ..." : "...";
  return "[" + s + "]";
}

}  // namespace sg::tools
