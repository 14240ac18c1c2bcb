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
#include <type_traits>
#include <utility>
#include <vector>

namespace flowrag {

// A random-access iterator over a container read by index ((*a)[i]
// returning `Reference`: a const reference, or a value for a container
// that makes its elements at each read, as BasedArray does).
template <class A, class Reference>
class IndexedIterator {
 public:
  using iterator_category = std::random_access_iterator_tag;
  using value_type = std::remove_cvref_t<Reference>;
  using difference_type = std::ptrdiff_t;
  using reference = Reference;
  using pointer = std::conditional_t<std::is_reference_v<Reference>, const value_type*, void>;

  IndexedIterator() = default;
  IndexedIterator(const A* a, size_t i) : a_(a), i_(i) {}
  reference operator*() const { return (*a_)[i_]; }
  pointer operator->() const requires std::is_reference_v<Reference> { return &(*a_)[i_]; }
  reference operator[](difference_type n) const { return (*a_)[i_ + n]; }
  IndexedIterator& operator++() { return ++i_, *this; }
  IndexedIterator operator++(int) { return {a_, i_++}; }
  IndexedIterator& operator--() { return --i_, *this; }
  IndexedIterator operator--(int) { return {a_, i_--}; }
  IndexedIterator& operator+=(difference_type n) { return i_ += n, *this; }
  IndexedIterator& operator-=(difference_type n) { return i_ -= n, *this; }
  friend IndexedIterator operator+(IndexedIterator it, difference_type n) { return it += n; }
  friend IndexedIterator operator+(difference_type n, IndexedIterator it) { return it += n; }
  friend IndexedIterator operator-(IndexedIterator it, difference_type n) { return it -= n; }
  friend difference_type operator-(const IndexedIterator& a, const IndexedIterator& b) {
    return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
  }
  friend bool operator==(const IndexedIterator& a, const IndexedIterator& b) {
    return a.i_ == b.i_;
  }
  friend auto operator<=>(const IndexedIterator& a, const IndexedIterator& b) {
    return a.i_ <=> b.i_;
  }

 private:
  const A* a_ = nullptr;
  size_t i_ = 0;
};

template <class T, size_t kChunk = 4096>
class ChunkedArray {
  static_assert(kChunk > 0 && (kChunk & (kChunk - 1)) == 0, "kChunk: a power of two");

 public:
  using const_iterator = IndexedIterator<ChunkedArray, const T&>;

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
