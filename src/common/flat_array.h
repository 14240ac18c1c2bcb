// FlatArray<T> and StringArena: the read-only arrays of the structures a
// query reads (BM25 postings, CSR graph arrays, vectors), which either own
// their elements (built in memory) or borrow them from memory that someone
// else owns, typically a memory-mapped segment file (segment/), kept alive
// by a shared handle. A structure built in memory and one adopted from a
// segment are then the same type with the same arrays, used the same way.
//
//   FlatArray<uint32_t> built(std::vector<uint32_t>{1, 2, 3});     // owns
//   FlatArray<uint32_t> mapped = FlatArray<uint32_t>::Borrow(span, reader);
//   for (uint32_t x : mapped) ...                                  // in place
//
// T must be trivially copyable (the bytes are the elements, as written).
// A borrowed array's memory must stay valid and unchanged while `keep` (or
// a copy of the array, which shares it) lives.
//
// StringArena: n strings as one byte array and n + 1 offsets (string i is
// bytes [offsets[i], offsets[i + 1])), so that a million names are two
// arrays, not a million allocations. Borrow checks the offsets (first 0,
// non-decreasing, last == bytes) in O(n): a damaged arena is refused, never
// read out of range. Its bytes may be lazy (BorrowLazily): operator[] then
// verifies each string it hands out.
//
// Lazily verified arrays: a large array borrowed from a segment may be
// handed out before its bytes were checksummed (ArraySource::GetLazy), with
// a LazyCheck that verifies a range at its first use. Its reader calls
// Verify(first, count) before reading elements it has not verified, and
// leaves out what fails (the damage is recorded by the source and reported
// by ArraySource::Damage, so the owner can rebuild). span(), operator[] and
// the iterators never verify: only the structure that adopted the array
// reads it, and only through its checked paths. An array built in memory,
// or borrowed verified, has no check: Verify is OK at no cost.
//
// Thread-safety: const methods may run concurrently; a FlatArray is not
// modified once shared (Mutable on a shared array is a data race).
#ifndef FLOWRAG_COMMON_FLAT_ARRAY_H_
#define FLOWRAG_COMMON_FLAT_ARRAY_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "flowrag/status.h"

namespace flowrag {

// The checks of one lazily verified borrowed array (above), implemented by
// its source. Thread-safe.
class LazyCheck {
 public:
  virtual ~LazyCheck() = default;
  // OK when bytes [first, first + count) of the array passed their checks,
  // now or before; else Corruption naming the array and the damaged place
  // (recorded by the source as well).
  virtual Status Verify(uint64_t first, uint64_t count) const = 0;
  // Records damage that the array's reader found in what verified bytes say
  // (an id out of range): the source reports it from then on.
  virtual void Report(const Status& damage) const = 0;
};

template <class T>
class FlatArray {
  static_assert(std::is_trivially_copyable_v<T>, "FlatArray holds raw elements");

 public:
  using value_type = T;

  FlatArray() = default;
  // Owns `elements`.
  FlatArray(std::vector<T> elements)  // NOLINT(google-explicit-constructor): built arrays convert
      : owned_(std::move(elements)), view_(owned_) {}
  FlatArray(const FlatArray& other) { *this = other; }
  FlatArray(FlatArray&& other) noexcept { *this = std::move(other); }
  FlatArray& operator=(const FlatArray& other) {
    if (this == &other) return *this;
    keep_ = other.keep_;
    check_ = other.check_;
    borrowed_ = other.borrowed_;
    if (other.borrowed_) {
      owned_.clear();
      view_ = other.view_;
    } else {
      owned_ = other.owned_;
      view_ = owned_;
    }
    return *this;
  }
  FlatArray& operator=(FlatArray&& other) noexcept {
    if (this == &other) return *this;
    borrowed_ = other.borrowed_;
    keep_ = std::move(other.keep_);
    check_ = std::move(other.check_);
    owned_ = std::move(other.owned_);
    view_ = borrowed_ ? other.view_ : std::span<const T>(owned_);
    other.owned_.clear();
    other.view_ = {};
    other.keep_.reset();
    other.check_.reset();
    other.borrowed_ = false;
    return *this;
  }

  // Borrows `elements`, valid while `keep` lives. `keep` must not be null
  // unless `elements` is static.
  static FlatArray Borrow(std::span<const T> elements, std::shared_ptr<const void> keep) {
    FlatArray array;
    array.view_ = elements;
    array.keep_ = std::move(keep);
    array.borrowed_ = true;
    return array;
  }
  // Borrows `elements` before they are verified: `check` verifies them by
  // range (above). `check` null: as Borrow.
  static FlatArray BorrowLazily(std::span<const T> elements, std::shared_ptr<const void> keep,
                                std::shared_ptr<const LazyCheck> check) {
    FlatArray array = Borrow(elements, std::move(keep));
    array.check_ = std::move(check);
    return array;
  }

  // True when elements must be verified before they are read (above).
  bool lazy() const { return check_ != nullptr; }
  // OK when elements [first, first + count) may be read: at once for an
  // array that is not lazy; else after their bytes pass (Corruption when
  // they do not). REQUIRES: the range inside the array. O(1) when already
  // verified, else O(bytes of the blocks covering them).
  Status Verify(size_t first, size_t count) const {
    if (check_ == nullptr || count == 0) return Status::Ok();
    return check_->Verify(uint64_t{first} * sizeof(T), uint64_t{count} * sizeof(T));
  }
  Status VerifyAll() const { return Verify(0, size()); }
  // Records damage found in the elements' meaning with the source (a lazy
  // array; otherwise nothing: its adopter checked the meaning at adoption).
  void ReportDamage(const Status& damage) const {
    if (check_ != nullptr) check_->Report(damage);
  }

  std::span<const T> span() const { return view_; }
  operator std::span<const T>() const { return view_; }  // NOLINT: used as a span
  const T* data() const { return view_.data(); }
  size_t size() const { return view_.size(); }
  bool empty() const { return view_.empty(); }
  const T& operator[](size_t i) const { return view_[i]; }
  const T& back() const { return view_.back(); }
  auto begin() const { return view_.begin(); }
  auto end() const { return view_.end(); }
  bool borrowed() const { return borrowed_; }
  // The bytes the array holds (owned: its vector's size, not capacity).
  size_t bytes() const { return view_.size_bytes(); }

  // The elements as an owned vector to change: a borrowed array copies them
  // first (and owns them from then on). Invalidates spans taken before.
  // REQUIRES: a lazy array verified (VerifyAll) first.
  std::vector<T>& Mutable() {
    if (borrowed_) {
      owned_.assign(view_.begin(), view_.end());
      keep_.reset();
      check_.reset();
      borrowed_ = false;
    }
    return owned_;
  }
  // Call after changing Mutable()'s vector: the view follows it.
  void Sync() { view_ = owned_; }

 private:
  std::vector<T> owned_;
  std::span<const T> view_;
  std::shared_ptr<const void> keep_;
  std::shared_ptr<const LazyCheck> check_;  // null unless borrowed lazily
  bool borrowed_ = false;
};

// Equal elements, however held.
template <class T>
bool operator==(const FlatArray<T>& a, const FlatArray<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::equal(a.begin(), a.end(), b.begin()));
}

class StringArena {
 public:
  StringArena() : offsets_(std::vector<uint64_t>{0}) {}
  explicit StringArena(const std::vector<std::string>& strings) : StringArena() {
    for (const std::string& s : strings) Append(s);
  }

  // Borrows `offsets` (size n + 1) and `bytes`, kept alive by `keep`;
  // Corruption when the offsets do not delimit `bytes` (see above). O(n).
  static Result<StringArena> Borrow(std::span<const uint64_t> offsets, std::span<const char> bytes,
                                    const std::shared_ptr<const void>& keep) {
    if (offsets.empty() || offsets.front() != 0 || offsets.back() != bytes.size()) {
      return Status::Corruption("string arena: offsets do not span its bytes");
    }
    for (size_t i = 1; i < offsets.size(); ++i) {
      if (offsets[i] < offsets[i - 1]) {
        return Status::Corruption("string arena: offset " + std::to_string(i) + " decreases");
      }
    }
    StringArena arena;
    arena.offsets_ = FlatArray<uint64_t>::Borrow(offsets, keep);
    arena.bytes_ = FlatArray<char>::Borrow(bytes, keep);
    return arena;
  }

  // As Borrow, but `bytes` may be lazy (FlatArray::BorrowLazily): string i
  // is verified at its first read by operator[]. The offsets are borrowed
  // verified, and checked here.
  static Result<StringArena> BorrowLazily(std::span<const uint64_t> offsets, FlatArray<char> bytes,
                                          const std::shared_ptr<const void>& keep) {
    FLOWRAG_ASSIGN_OR_RETURN(StringArena arena, Borrow(offsets, bytes.span(), keep));
    arena.bytes_ = std::move(bytes);
    return arena;
  }

  size_t size() const { return offsets_.size() - 1; }
  bool empty() const { return size() == 0; }
  // String i. Of a lazy arena (BorrowLazily): verified first, and empty
  // when its bytes fail (the damage is recorded by their source).
  std::string_view operator[](size_t i) const {
    const uint64_t begin = offsets_[i], length = offsets_[i + 1] - begin;
    if (bytes_.lazy() && !bytes_.Verify(begin, length).ok()) return {};
    return std::string_view(bytes_.data() + begin, length);
  }
  void Append(std::string_view s) {
    std::vector<char>& bytes = bytes_.Mutable();
    bytes.insert(bytes.end(), s.begin(), s.end());
    bytes_.Sync();
    offsets_.Mutable().push_back(bytes.size());
    offsets_.Sync();
  }
  void Reserve(size_t strings, size_t bytes) {
    offsets_.Mutable().reserve(strings + 1);
    offsets_.Sync();
    bytes_.Mutable().reserve(bytes);
    bytes_.Sync();
  }
  const FlatArray<uint64_t>& offsets() const { return offsets_; }
  const FlatArray<char>& bytes() const { return bytes_; }
  size_t memory_bytes() const { return offsets_.bytes() + bytes_.bytes(); }

  friend bool operator==(const StringArena& a, const StringArena& b) {
    return a.offsets_ == b.offsets_ && a.bytes_ == b.bytes_;
  }

 private:
  FlatArray<uint64_t> offsets_;
  FlatArray<char> bytes_;
};

}  // namespace flowrag

#endif  // FLOWRAG_COMMON_FLAT_ARRAY_H_
