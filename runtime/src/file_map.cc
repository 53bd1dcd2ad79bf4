#include "file_map.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <utility>

#include "sgraph_header.h"

namespace sg::runtime {

MappedBytes::MappedBytes(MappedBytes&& o) noexcept
    : kind_(std::exchange(o.kind_, Kind::kNone)),
      data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)) {}

MappedBytes& MappedBytes::operator=(MappedBytes&& o) noexcept {
  if (this != &o) {
    reset();
    kind_ = std::exchange(o.kind_, Kind::kNone);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

MappedBytes::~MappedBytes() { reset(); }

void MappedBytes::reset() {
  switch (kind_) {
    case Kind::kMapped:
      if (size_ > 0) munmap(const_cast<uint8_t*>(data_), size_);
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
}

Result<MappedBytes> MappedBytes::map_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return invalid_graph("cannot open '" + path + "': " + std::strerror(errno));
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
  }
  ::close(fd);  // the mapping stays valid without the descriptor
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
  void* p = ::operator new(bytes.size() + format::kDataTailPadding,
                           std::align_val_t(format::kAlignment), std::nothrow);
  if (p == nullptr) return out_of_memory("cannot allocate " + std::to_string(bytes.size()) +
                                         " bytes for a copy of the graph");
  if (!bytes.empty()) std::memcpy(p, bytes.data(), bytes.size());
  m.kind_ = Kind::kOwnedCopy;
  m.data_ = static_cast<const uint8_t*>(p);
  m.size_ = bytes.size();
  return m;
}

}  // namespace sg::runtime
