// ChunkedArray<T>: an append-only array kept in fixed-size chunks that
// copies share. A copy costs one pointer per chunk (a snapshot extended by a
// few documents copies 25 pointers for 10^5 documents, not the documents);
// push_back on a copy copies only its last chunk when another array shares
// it (copy on write), so the original never changes. Elements are read by
// index or through random-access iterators, as from a std::vector.
//
// Thread-safety: like std::vector (concurrent reads of a const array are
// safe, including of arrays that share chunks; writes need exclusive
// access to the array written, never to the arrays sharing its chunks).
#ifndef FLOWRAG_COMMON_CHUNKED_ARRAY_H_
#define FLOWRAG_COMMON_CHUNKED_ARRAY_H_

#include <cstddef>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

namespace flowrag {

template <class T, size_t kChunk = 4096>
class ChunkedArray {
  static_assert(kChunk > 0 && (kChunk & (kChunk - 1)) == 0, "kChunk: a power of two");

 public:
  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T*;
    using reference = const T&;

    const_iterator() = default;
    const_iterator(const ChunkedArray* a, size_t i) : a_(a), i_(i) {}
    reference operator*() const { return (*a_)[i_]; }
    pointer operator->() const { return &(*a_)[i_]; }
    reference operator[](difference_type n) const { return (*a_)[i_ + n]; }
    const_iterator& operator++() { return ++i_, *this; }
    const_iterator operator++(int) { return {a_, i_++}; }
    const_iterator& operator--() { return --i_, *this; }
    const_iterator operator--(int) { return {a_, i_--}; }
    const_iterator& operator+=(difference_type n) { return i_ += n, *this; }
    const_iterator& operator-=(difference_type n) { return i_ -= n, *this; }
    friend const_iterator operator+(const_iterator it, difference_type n) { return it += n; }
    friend const_iterator operator+(difference_type n, const_iterator it) { return it += n; }
    friend const_iterator operator-(const_iterator it, difference_type n) { return it -= n; }
    friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
      return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) {
      return a.i_ == b.i_;
    }
    friend auto operator<=>(const const_iterator& a, const const_iterator& b) {
      return a.i_ <=> b.i_;
    }

   private:
    const ChunkedArray* a_ = nullptr;
    size_t i_ = 0;
  };

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // REQUIRES i < size().
  const T& operator[](size_t i) const { return (*chunks_[i / kChunk])[i % kChunk]; }
  const T& back() const { return (*this)[size_ - 1]; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

  void push_back(T value) {
    if (size_ % kChunk == 0) {
      chunks_.push_back(std::make_shared<std::vector<T>>());
      chunks_.back()->reserve(kChunk);
    } else if (chunks_.back().use_count() > 1) {
      chunks_.back() = std::make_shared<std::vector<T>>(*chunks_.back());  // shared: copy it
      chunks_.back()->reserve(kChunk);
    }
    chunks_.back()->push_back(std::move(value));
    ++size_;
  }
  // Room for `n` elements' chunk pointers (the chunks are allocated whole).
  void reserve(size_t n) { chunks_.reserve((n + kChunk - 1) / kChunk); }

  // How many chunks this array shares with `other` (for tests).
  size_t SharedChunks(const ChunkedArray& other) const {
    size_t n = 0;
    for (size_t c = 0; c < chunks_.size() && c < other.chunks_.size(); ++c) {
      n += chunks_[c] == other.chunks_[c];
    }
    return n;
  }

 private:
  // Full chunks hold kChunk elements; only the last may hold fewer. A chunk
  // shared with another array is never written (push_back copies it).
  std::vector<std::shared_ptr<std::vector<T>>> chunks_;
  size_t size_ = 0;
};

}  // namespace flowrag

#endif  // FLOWRAG_COMMON_CHUNKED_ARRAY_H_
