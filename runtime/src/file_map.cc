#include "file_map.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "sgraph_header.h"

namespace sg::runtime {

MappedBytes::MappedBytes(MappedBytes&& o) noexcept
    : kind_(std::exchange(o.kind_, Kind::kNone)),
      data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      map_base_(std::exchange(o.map_base_, nullptr)),
      map_size_(std::exchange(o.map_size_, 0)) {}

MappedBytes& MappedBytes::operator=(MappedBytes&& o) noexcept {
  if (this != &o) {
    reset();
    kind_ = std::exchange(o.kind_, Kind::kNone);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    map_base_ = std::exchange(o.map_base_, nullptr);
    map_size_ = std::exchange(o.map_size_, 0);
  }
  return *this;
}

MappedBytes::~MappedBytes() { reset(); }

void MappedBytes::reset() {
  switch (kind_) {
    case Kind::kMapped:
      if (map_size_ > 0) munmap(const_cast<uint8_t*>(map_base_), map_size_);
      break;
    case Kind::kOwnedCopy:
      ::operator delete(const_cast<uint8_t*>(data_), std::align_val_t(format::kAlignment));
      break;
    case Kind::kNone:
    case Kind::kBorrowed:
      break;
  }
  kind_ = Kind::kNone;
  data_ = nullptr;
  size_ = 0;
  map_base_ = nullptr;
  map_size_ = 0;
}

Result<MappedBytes> MappedBytes::map_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    const std::string why = "cannot open '" + path + "': " + std::strerror(err);
    return err == ENOENT || err == ENOTDIR ? not_found(why) : invalid_graph(why);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return invalid_graph("cannot stat '" + path + "': " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return invalid_graph("'" + path + "' is not a regular file");
  }
  MappedBytes m;
  m.kind_ = Kind::kMapped;
  m.size_ = size_t(st.st_size);
  if (m.size_ > 0) {
    void* p = ::mmap(nullptr, m.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return invalid_graph("cannot map '" + path + "': " + std::strerror(err));
    }
    m.data_ = static_cast<const uint8_t*>(p);
    m.map_base_ = m.data_;
    m.map_size_ = m.size_;
  }
  ::close(fd);  // the mapping stays valid without the descriptor
  return m;
}

Result<MappedBytes> MappedBytes::map_range(int fd, uint64_t offset, uint64_t length) {
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0)
    return invalid_argument("file descriptor " + std::to_string(fd) + " is not open: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return invalid_graph("file descriptor " + std::to_string(fd) + " is not a regular file");
  const uint64_t file_size = uint64_t(st.st_size);
  if (offset > file_size)
    return invalid_graph("offset " + std::to_string(offset) + " is past the end of the file (" +
                         std::to_string(file_size) + " bytes)");
  if (length == 0) length = file_size - offset;
  if (length > file_size - offset)
    return invalid_graph("the range of " + std::to_string(length) + " bytes at offset " + std::to_string(offset) +
                         " passes the end of the file (" + std::to_string(file_size) + " bytes)");
  if (length > uint64_t(SIZE_MAX / 2)) return invalid_graph("the range of " + std::to_string(length) + " bytes is too large");
  const long page = ::sysconf(_SC_PAGESIZE);
  const uint64_t page_size = page > 0 ? uint64_t(page) : 4096;
  const uint64_t base = offset / page_size * page_size;
  const size_t map_size = size_t(offset - base + length);
  MappedBytes m;
  if (length == 0) {
    m.kind_ = Kind::kMapped;
    return m;
  }
  void* p = ::mmap(nullptr, map_size, PROT_READ, MAP_PRIVATE, fd, off_t(base));
  if (p == MAP_FAILED)
    return invalid_graph("cannot map " + std::to_string(length) + " bytes at offset " + std::to_string(offset) + ": " +
                         std::strerror(errno));
  m.kind_ = Kind::kMapped;
  m.map_base_ = static_cast<const uint8_t*>(p);
  m.map_size_ = map_size;
  m.data_ = m.map_base_ + (offset - base);
  m.size_ = size_t(length);
  if (offset % format::kAlignment == 0) return m;
  // The constants must be 64-byte aligned for the kernels: a misaligned range is
  // copied once (and the mapping dropped when `m` goes).
  return copy_of(m.span());
}

Result<MappedBytes> MappedBytes::copy_of(std::span<const uint8_t> bytes) {
  void* p = ::operator new(bytes.size() + format::kDataTailPadding, std::align_val_t(format::kAlignment), std::nothrow);
  if (p == nullptr) return out_of_memory("cannot allocate " + std::to_string(bytes.size()) +
                                         " bytes for a copy of the graph");
  if (!bytes.empty()) std::memcpy(p, bytes.data(), bytes.size());
  MappedBytes m;
  m.kind_ = Kind::kOwnedCopy;
  m.data_ = static_cast<const uint8_t*>(p);
  m.size_ = bytes.size();
  return m;
}

Result<MappedBytes> MappedBytes::from_memory(std::span<const uint8_t> bytes) {
  MappedBytes m;
  if (reinterpret_cast<uintptr_t>(bytes.data()) % format::kAlignment == 0) {
    m.kind_ = Kind::kBorrowed;
    m.data_ = bytes.data();
    m.size_ = bytes.size();
    return m;
  }
  // Constants must be 64-byte aligned for the kernels, so misaligned input is
  // copied once; the padding keeps the copy readable like a mapping would be.
  return copy_of(bytes);
}

}  // namespace sg::runtime
