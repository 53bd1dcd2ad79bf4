// Span<T>: a pointer and a count, the public headers' stand-in for std::span so
// that they compile as C++17. It converts from any contiguous container (a
// std::vector, a std::array, a std::span) and, under C++20, to std::span.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#if __cplusplus >= 202002L && __has_include(<span>)
#include <span>
#endif

namespace sg {

template <class T>
class Span {
 public:
  using element_type = T;
  using value_type = std::remove_cv_t<T>;
  using size_type = size_t;
  using iterator = T*;

  constexpr Span() = default;
  constexpr Span(T* data, size_t size) : data_(data), size_(size) {}
  template <class U, size_t N, class = std::enable_if_t<std::is_convertible_v<U*, T*>>>
  constexpr Span(U (&array)[N]) : data_(array), size_(N) {}  // NOLINT(implicit)
  // Any contiguous container whose data() converts to T*: std::vector, std::array,
  // std::span, std::string (for Span<const char>), another Span.
  template <class C,
            class = std::enable_if_t<!std::is_same_v<std::decay_t<C>, Span> &&
                                     std::is_convertible_v<decltype(std::declval<C&>().data()), T*>>,
            class = decltype(std::declval<C&>().size())>
  constexpr Span(C&& c) : data_(c.data()), size_(size_t(c.size())) {}  // NOLINT(implicit)

  constexpr T* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr T& operator[](size_t i) const { return data_[i]; }
  constexpr T* begin() const { return data_; }
  constexpr T* end() const { return data_ + size_; }
  constexpr T& front() const { return data_[0]; }
  constexpr T& back() const { return data_[size_ - 1]; }
  constexpr Span subspan(size_t offset, size_t count) const { return {data_ + offset, count}; }

#if __cplusplus >= 202002L && __has_include(<span>)
  constexpr operator std::span<T>() const { return {data_, size_}; }  // NOLINT(implicit)
#endif

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace sg
