// Tensor: a dense, C-order, reference-counted n-d array, and the allocator
// interface behind all host memory of the runtime.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "stagegraph/dtype.h"
#include "stagegraph/export.h"
#include "stagegraph/span.h"
#include "stagegraph/status.h"

namespace sg {

inline constexpr int kMaxRank = 8;
inline constexpr size_t kTensorAlignment = 64;
// Readable bytes past the end of every buffer the runtime allocates (XNNPACK reads
// up to 16 past its inputs).
inline constexpr size_t kTensorPadding = 64;

// Host memory. The default uses mimalloc's mi_* API when the runtime is built with
// it, else aligned operator new; it has no mutable state.
class SG_API Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(size_t bytes, size_t alignment) = 0;
  virtual void deallocate(void* p, size_t bytes, size_t alignment) = 0;
};
SG_API Allocator* default_allocator();

// Copying a Tensor shares its storage (a reference count); clone() copies data.
class SG_API Tensor {
 public:
  Tensor() = default;
  // Allocates uninitialized storage (plus kTensorPadding readable bytes).
  static Result<Tensor> empty(DType dtype, Span<const int64_t> shape,
                              Allocator* allocator = nullptr);
  static Result<Tensor> zeros(DType dtype, Span<const int64_t> shape,
                              Allocator* allocator = nullptr);
  // A view of memory owned elsewhere (constants in a mapped file, a caller's
  // buffer); `data` must outlive the tensor and every copy of it. It may be read
  // only: the runtime never writes memory it did not allocate (an input it was
  // given this way included); data() gives it back writable, for the caller's use.
  static Tensor wrap(DType dtype, Span<const int64_t> shape, const void* data);
  // Like empty(), with room for at least `capacity_bytes` of data, so that a sole
  // owner can grow it along its first axis without moving it (tensor lists).
  static Result<Tensor> empty_with_capacity(DType dtype, Span<const int64_t> shape, size_t capacity_bytes,
                                            Allocator* allocator = nullptr);

  Tensor(const Tensor& o);
  Tensor& operator=(const Tensor& o);
  // Moves and destruction are inline: the executor moves tensors between frames
  // on every control-flow step, and an empty handle must cost nothing to drop.
  Tensor(Tensor&& o) noexcept
      : dtype_(o.dtype_), rank_(o.rank_), data_(o.data_), storage_(o.storage_) {
    copy_shape(o);
    o.data_ = nullptr;
    o.storage_ = nullptr;
    o.rank_ = 0;
  }
  Tensor& operator=(Tensor&& o) noexcept {
    if (this == &o) return *this;
    if (storage_ != nullptr) release();
    dtype_ = o.dtype_;
    rank_ = o.rank_;
    copy_shape(o);
    data_ = o.data_;
    storage_ = o.storage_;
    o.data_ = nullptr;
    o.storage_ = nullptr;
    o.rank_ = 0;
    return *this;
  }
  ~Tensor() {
    if (storage_ != nullptr) release();
  }
  // Drops the data (the storage when this was its last holder): an empty tensor.
  void reset() {
    if (storage_ != nullptr) release();
    data_ = nullptr;
    rank_ = 0;
  }

  bool defined() const { return data_ != nullptr || numel() == 0; }
  DType dtype() const { return dtype_; }
  int rank() const { return rank_; }
  Span<const int64_t> shape() const { return {shape_, size_t(rank_)}; }
  int64_t dim(int i) const { return shape_[i]; }
  int64_t numel() const;
  size_t nbytes() const { return size_t(numel()) * dtype_size(dtype_); }
  void* data() { return data_; }
  const void* data() const { return data_; }
  template <class T> T* data_as() { return static_cast<T*>(data_); }
  template <class T> const T* data_as() const { return static_cast<const T*>(data_); }
  // True when no other Tensor shares this storage (the executor may then reuse it).
  bool unique() const { return storage_ != nullptr && storage_->refs.load(std::memory_order_acquire) == 1; }
  // Bytes of data the storage has room for (0 for wrapped memory).
  size_t capacity_bytes() const;
  // Gives a tensor that holds its storage alone a new shape whose bytes fit its
  // capacity, keeping the data; returns false, changing nothing, otherwise.
  bool reshape_within_capacity(Span<const int64_t> shape);

  // For the runtime: the storage of this tensor, allocated from `from`, is freed to
  // `to` from now on (`from` must be a cache that allocates from `to`, or the
  // reverse); true also when it is `to`'s already, false (nothing changes) for other
  // or wrapped memory. Nobody may free the storage meanwhile.
  bool move_storage(Allocator* from, Allocator* to);

  // Host copy; kInvalidArgument for a tensor in device memory (device_memory()).
  Result<Tensor> clone(Allocator* allocator = nullptr) const;

  // Storage in memory the host may not address (a device's, from `device_memory`,
  // whose allocate() returns device addresses): the data lives there, the reference
  // count apart in host memory, and data() is a device address. For device
  // implementations (the runtime's device interface); capacity_bytes() is 0.
  static Result<Tensor> empty_on_device(DType dtype, Span<const int64_t> shape, Allocator* device_memory);
  // The allocator of a tensor made by empty_on_device (a copy shares it), else null.
  Allocator* device_memory() const;

 private:
  // The header in front of an owned buffer's data. Defined here so that unique()
  // and moves inline: the executor asks on every in-place candidate.
  struct Storage {
    std::atomic<int64_t> refs{1};
    Allocator* allocator = nullptr;
    size_t alloc_bytes = 0;
  };
  void release();
  void copy_shape(const Tensor& o) { std::memcpy(shape_, o.shape_, sizeof(shape_)); }
  DType dtype_ = DType::kF32;
  int rank_ = 0;
  int64_t shape_[kMaxRank] = {};
  void* data_ = nullptr;
  Storage* storage_ = nullptr;  // null for wrapped memory
};

}  // namespace sg
