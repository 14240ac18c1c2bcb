// BasedArray<T>: a read-only base of elements read by value from where
// they already are (a segment's mapped arrays, behind Base::At), followed
// by elements appended in a ChunkedArray that copies share. What a
// snapshot's documents and passages are: an open adopts the base in O(1)
// instead of copying 10^6 structs out of the segment's arrays (doc/scale.md
// stop 55), and an insert appends as before.
//
// Elements are returned by value (T is small: a few ids and views). A copy
// shares the base and the appended chunks (ChunkedArray's copy on write).
//
// Thread-safety: like std::vector (concurrent reads of a const array are
// safe; Base::At must be safe to call concurrently).
#ifndef FLOWRAG_COMMON_BASED_ARRAY_H_
#define FLOWRAG_COMMON_BASED_ARRAY_H_

#include <cstddef>
#include <memory>
#include <utility>

#include "common/chunked_array.h"

namespace flowrag {

template <class T>
class BasedArray {
 public:
  // The base's elements, read in place. Immutable once handed over.
  class Base {
   public:
    virtual ~Base() = default;
    virtual size_t size() const = 0;
    // Element i (REQUIRES i < size()).
    virtual T At(size_t i) const = 0;
  };

  using const_iterator = IndexedIterator<BasedArray, T>;

  BasedArray() = default;
  // `base` (may be null: none) first, nothing appended.
  explicit BasedArray(std::shared_ptr<const Base> base)
      : base_(std::move(base)), base_size_(base_ == nullptr ? 0 : base_->size()) {}

  size_t size() const { return base_size_ + appended_.size(); }
  bool empty() const { return size() == 0; }
  // REQUIRES i < size(). O(1).
  T operator[](size_t i) const { return i < base_size_ ? base_->At(i) : appended_[i - base_size_]; }
  T back() const { return (*this)[size() - 1]; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }

  void push_back(T value) { appended_.push_back(std::move(value)); }
  // Room for `n` elements in all.
  void reserve(size_t n) { appended_.reserve(n > base_size_ ? n - base_size_ : 0); }

  size_t base_size() const { return base_size_; }
  // How many appended chunks this array shares with `other` (for tests).
  size_t SharedChunks(const BasedArray& other) const {
    return appended_.SharedChunks(other.appended_);
  }

 private:
  std::shared_ptr<const Base> base_;
  size_t base_size_ = 0;
  ChunkedArray<T> appended_;
};

}  // namespace flowrag

#endif  // FLOWRAG_COMMON_BASED_ARRAY_H_
