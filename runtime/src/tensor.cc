#include "stagegraph/tensor.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <utility>

#include "stagegraph/runtime.h"

namespace sg {

// The header of an owned buffer. It lives in the first kTensorAlignment bytes of
// the same allocation as the data, so a tensor costs one allocation.
namespace {

Status checked_numel(Span<const int64_t> shape, int64_t* numel) {
  if (shape.size() > size_t(kMaxRank))
    return invalid_argument("tensor rank " + std::to_string(shape.size()) + " exceeds the maximum " +
                            std::to_string(kMaxRank));
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return invalid_argument("negative dimension " + std::to_string(d));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      return out_of_memory("tensor element count overflows");
    n *= d;
  }
  *numel = n;
  return Status::Ok();
}

}  // namespace

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int i = 0; i < rank_; ++i) n *= shape_[i];
  return n;
}

Result<Tensor> Tensor::empty(DType dtype, Span<const int64_t> shape, Allocator* allocator) {
  return empty_with_capacity(dtype, shape, 0, allocator);
}

Result<Tensor> Tensor::empty_with_capacity(DType dtype, Span<const int64_t> shape, size_t capacity_bytes,
                                           Allocator* allocator) {
  static_assert(sizeof(Storage) <= kTensorAlignment, "the storage header must fit before the data");
  int64_t n = 0;
  SG_RETURN_IF_ERROR(checked_numel(shape, &n));
  const size_t elem = dtype_size(dtype);
  const size_t limit = std::numeric_limits<size_t>::max() / 2;
  if (size_t(n) > (limit - kTensorAlignment - kTensorPadding) / elem)
    return out_of_memory("tensor of " + std::to_string(n) + " elements is too large");
  if (capacity_bytes > limit - kTensorAlignment - kTensorPadding)
    return out_of_memory("tensor capacity of " + std::to_string(capacity_bytes) + " bytes is too large");
  const size_t data_bytes = std::max(size_t(n) * elem, capacity_bytes);
  const size_t alloc_bytes = kTensorAlignment + data_bytes + kTensorPadding;
  if (allocator == nullptr) allocator = default_allocator();
  void* block = allocator->allocate(alloc_bytes, kTensorAlignment);
  if (block == nullptr)
    return out_of_memory("cannot allocate " + std::to_string(data_bytes) + " bytes for a tensor");
  Tensor t;
  t.dtype_ = dtype;
  t.rank_ = int(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) t.shape_[i] = shape[i];
  t.storage_ = new (block) Storage();
  t.storage_->allocator = allocator;
  t.storage_->alloc_bytes = alloc_bytes;
  t.data_ = static_cast<uint8_t*>(block) + kTensorAlignment;
  return t;
}

Result<Tensor> Tensor::zeros(DType dtype, Span<const int64_t> shape, Allocator* allocator) {
  SG_ASSIGN_OR_RETURN(Tensor t, empty(dtype, shape, allocator));
  std::memset(t.data_, 0, t.nbytes());
  return t;
}

Tensor Tensor::wrap(DType dtype, Span<const int64_t> shape, const void* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.rank_ = int(shape.size() <= size_t(kMaxRank) ? shape.size() : size_t(kMaxRank));
  for (int i = 0; i < t.rank_; ++i) t.shape_[i] = shape[i];
  // Wrapped memory has no storage, so unique() is false and the executor never
  // writes over it (no in-place reuse): the constness is kept in fact.
  t.data_ = const_cast<void*>(data);
  return t;
}

Tensor::Tensor(const Tensor& o)
    : dtype_(o.dtype_), rank_(o.rank_), data_(o.data_), storage_(o.storage_) {
  std::memcpy(shape_, o.shape_, sizeof(shape_));
  if (storage_ != nullptr) storage_->refs.fetch_add(1, std::memory_order_relaxed);
}

Tensor& Tensor::operator=(const Tensor& o) {
  if (this == &o) return *this;
  if (o.storage_ != nullptr) o.storage_->refs.fetch_add(1, std::memory_order_relaxed);
  release();
  dtype_ = o.dtype_;
  rank_ = o.rank_;
  std::memcpy(shape_, o.shape_, sizeof(shape_));
  data_ = o.data_;
  storage_ = o.storage_;
  return *this;
}

void Tensor::release() {
  Storage* s = std::exchange(storage_, nullptr);
  data_ = nullptr;
  if (s == nullptr) return;
  if (s->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    Allocator* allocator = s->allocator;
    const size_t bytes = s->alloc_bytes;
    s->~Storage();
    allocator->deallocate(s, bytes, kTensorAlignment);
  }
}

namespace {

// The host header of a tensor in device memory: the Storage, then where its data
// lives. Its Storage::allocator is the one below, which frees both.
struct DeviceHeader {
  Allocator* device = nullptr;
  void* data = nullptr;
  size_t bytes = 0;
};
constexpr size_t kDeviceHeaderAt = 32;

class DeviceStorageRelease final : public Allocator {
 public:
  void* allocate(size_t, size_t) override { return nullptr; }
  void deallocate(void* p, size_t bytes, size_t alignment) override {
    const DeviceHeader* h = reinterpret_cast<const DeviceHeader*>(static_cast<uint8_t*>(p) + kDeviceHeaderAt);
    if (h->data != nullptr) h->device->deallocate(h->data, h->bytes, kTensorAlignment);
    default_allocator()->deallocate(p, bytes, alignment);
  }
};

// Stateless, like default_allocator(): only its address is compared.
Allocator* device_storage_release() {
  static DeviceStorageRelease release;
  return &release;
}

}  // namespace

Result<Tensor> Tensor::empty_on_device(DType dtype, Span<const int64_t> shape, Allocator* device_memory) {
  static_assert(sizeof(Storage) <= kDeviceHeaderAt && kDeviceHeaderAt + sizeof(DeviceHeader) <= kTensorAlignment,
                "the storage and device headers must fit one block");
  if (device_memory == nullptr) return invalid_argument("empty_on_device: no device memory");
  int64_t n = 0;
  SG_RETURN_IF_ERROR(checked_numel(shape, &n));
  const size_t elem = dtype_size(dtype);
  if (size_t(n) > (std::numeric_limits<size_t>::max() / 2) / elem)
    return out_of_memory("tensor of " + std::to_string(n) + " elements is too large");
  const size_t bytes = size_t(n) * elem;
  void* block = default_allocator()->allocate(kTensorAlignment, kTensorAlignment);
  if (block == nullptr) return out_of_memory("cannot allocate a tensor's header");
  void* data = bytes > 0 ? device_memory->allocate(bytes, kTensorAlignment) : nullptr;
  if (bytes > 0 && data == nullptr) {
    default_allocator()->deallocate(block, kTensorAlignment, kTensorAlignment);
    return out_of_memory("cannot allocate " + std::to_string(bytes) + " bytes of device memory for a tensor");
  }
  Tensor t;
  t.dtype_ = dtype;
  t.rank_ = int(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) t.shape_[i] = shape[i];
  t.storage_ = new (block) Storage();
  t.storage_->allocator = device_storage_release();
  t.storage_->alloc_bytes = kTensorAlignment;
  new (static_cast<uint8_t*>(block) + kDeviceHeaderAt) DeviceHeader{device_memory, data, bytes};
  // An empty tensor still needs a non-null address to count as defined.
  t.data_ = data != nullptr ? data : static_cast<uint8_t*>(block) + kDeviceHeaderAt;
  return t;
}

Allocator* Tensor::device_memory() const {
  if (storage_ == nullptr || storage_->allocator != device_storage_release()) return nullptr;
  return reinterpret_cast<const DeviceHeader*>(reinterpret_cast<const uint8_t*>(storage_) + kDeviceHeaderAt)->device;
}

size_t Tensor::capacity_bytes() const {
  if (storage_ == nullptr || storage_->allocator == device_storage_release()) return 0;
  return storage_->alloc_bytes - kTensorAlignment - kTensorPadding;
}

bool Tensor::move_storage(Allocator* from, Allocator* to) {
  if (storage_ == nullptr) return false;
  if (storage_->allocator == to) return true;
  if (storage_->allocator != from) return false;
  storage_->allocator = to;
  return true;
}

bool Tensor::reshape_within_capacity(Span<const int64_t> shape) {
  int64_t n = 0;
  if (!unique() || !checked_numel(shape, &n).ok() || size_t(n) > capacity_bytes() / dtype_size(dtype_)) return false;
  rank_ = int(shape.size());
  for (int i = 0; i < rank_; ++i) shape_[i] = shape[size_t(i)];
  return true;
}

Result<Tensor> Tensor::clone(Allocator* allocator) const {
  if (device_memory() != nullptr) return invalid_argument("clone: the tensor is in device memory");
  SG_ASSIGN_OR_RETURN(Tensor t, empty(dtype_, shape(), allocator));
  if (data_ != nullptr) std::memcpy(t.data_, data_, nbytes());
  return t;
}

std::string TensorSpec::shape_string() const {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    if (i < dim_names.size() && !dim_names[i].empty())
      s += dim_names[i];
    else
      s += std::to_string(shape[i]);
  }
  return s + "]";
}

}  // namespace sg
