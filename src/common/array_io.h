// ArraySink and ArraySource: how a structure that queries read (the BM25
// index, the knowledge graph, vector indexes, derived query indexes) hands
// its flat arrays to a file and takes them back in place, without knowing
// the file. The snapshot's segment (graph/snapshot_segment.h) implements
// both over a segment file (segment/): each named array is one section,
// and the source borrows the mapped section (FlatArray::Borrow), so a
// structure opened from a segment reads the file's pages instead of copies.
//
//   // Writing (a structure's ExportArrays):
//   FLOWRAG_RETURN_IF_ERROR(sink.Put<uint32_t>("bm25.docs", post_doc_.span()));
//   // Reading (a structure's AdoptArrays): verified, borrowed, kept alive
//   FLOWRAG_ASSIGN_OR_RETURN(FlatArray<uint32_t> docs, source.Get<uint32_t>("bm25.docs"));
//
// Names: 1 to 31 printable ASCII bytes, unique per sink; by convention a
// structure prefixes its names ("bm25.", "kg.", "walk."). Scalars (counts,
// parameters) are one-element arrays. A Get of a name that was never put is
// NotFound; of a name put with another element type, InvalidArgument; of
// damaged bytes, Corruption. The arrays a source hands out are checked for
// integrity (checksums), never for meaning: the structure that adopts them
// checks every offset and index against its ranges before use, as a parser
// of outside bytes does (a damaged or crafted file is refused, never read
// out of range).
//
// Lazy adoption: GetLazy hands out an array before its bytes are verified
// when the source can verify ranges later (a segment: by its checksummed
// blocks), so that opening a store of gigabytes of vectors reads none of
// them; the adopter verifies what it reads (FlatArray::Verify) and the
// damage it finds is kept by the source (Damage()) for the owner to act on
// (the engine rebuilds the snapshot from the store). A source that cannot
// defer hands out verified arrays (FlatArray::lazy() false).
//
// Access hints: Put's `random` says the array is read by scattered rows
// (vectors, CSR targets), so the file keeps it in small checksummed blocks
// and the kernel reads one page per fault.
//
// Thread-safety: a sink is used by one thread; a source's Get may be called
// from any thread.
#ifndef FLOWRAG_COMMON_ARRAY_IO_H_
#define FLOWRAG_COMMON_ARRAY_IO_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>

#include "common/flat_array.h"
#include "flowrag/status.h"

namespace flowrag {

enum class ArrayKind : uint8_t { kU8, kI8, kU16, kI16, kU32, kI32, kU64, kI64, kF32, kF64 };

template <class T>
constexpr ArrayKind ArrayKindOf() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, float>) return ArrayKind::kF32;
  else if constexpr (std::is_same_v<U, double>) return ArrayKind::kF64;
  else if constexpr (std::is_same_v<U, char> || std::is_same_v<U, unsigned char> ||
                     std::is_same_v<U, std::byte> || std::is_same_v<U, uint8_t>)
    return ArrayKind::kU8;
  else if constexpr (std::is_same_v<U, int8_t> || std::is_same_v<U, signed char>) return ArrayKind::kI8;
  else if constexpr (std::is_same_v<U, uint16_t>) return ArrayKind::kU16;
  else if constexpr (std::is_same_v<U, int16_t>) return ArrayKind::kI16;
  else if constexpr (std::is_same_v<U, uint32_t>) return ArrayKind::kU32;
  else if constexpr (std::is_same_v<U, int32_t>) return ArrayKind::kI32;
  else if constexpr (std::is_same_v<U, uint64_t>) return ArrayKind::kU64;
  else if constexpr (std::is_same_v<U, int64_t>) return ArrayKind::kI64;
  else static_assert(sizeof(T) == 0, "no array kind for this element type");
}

class ArraySink {
 public:
  virtual ~ArraySink() = default;
  virtual Status PutBytes(std::string_view name, ArrayKind kind, size_t element_size,
                          std::span<const std::byte> bytes, bool random) = 0;

  template <class T>
  Status Put(std::string_view name, std::span<const T> values, bool random = false) {
    return PutBytes(name, ArrayKindOf<T>(), sizeof(T), std::as_bytes(values), random);
  }
  template <class T>
  Status PutScalar(std::string_view name, T value) {
    return Put<T>(name, std::span<const T>(&value, 1));
  }
  // A StringArena as two arrays: `<name>.o` offsets and `<name>.b` bytes;
  // `random` is the bytes' hint (texts read one at a time, by id: a 4 KiB
  // block verified and one page mapped per text instead of 64 KiB).
  Status PutStrings(std::string_view name, const StringArena& strings, bool random = false);
};

class ArraySource {
 public:
  virtual ~ArraySource() = default;
  // The verified bytes of array `name`, put with `kind` and `element_size`.
  virtual Result<std::span<const std::byte>> GetBytes(std::string_view name, ArrayKind kind,
                                                      size_t element_size) const = 0;
  // True when an array of that name was put.
  virtual bool Has(std::string_view name) const = 0;
  // What keeps the bytes alive (the mapping).
  virtual std::shared_ptr<const void> keep() const = 0;
  // The bytes of array `name` as GetBytes, but perhaps not yet verified:
  // then `check` verifies them by range (above). The default: GetBytes,
  // no check.
  struct LazyBytes {
    std::span<const std::byte> bytes;
    std::shared_ptr<const LazyCheck> check;
  };
  virtual Result<LazyBytes> GetLazyBytes(std::string_view name, ArrayKind kind,
                                         size_t element_size) const;
  // The first damage found in lazily verified arrays after adoption, by
  // their checks or reported by their adopters; OK when none. Thread-safe.
  virtual Status Damage() const { return Status::Ok(); }

  template <class T>
  Result<FlatArray<T>> Get(std::string_view name) const {
    FLOWRAG_ASSIGN_OR_RETURN(std::span<const std::byte> bytes,
                             GetBytes(name, ArrayKindOf<T>(), sizeof(T)));
    return Borrowed<T>(name, bytes, nullptr);
  }
  // Get, verified lazily where the source can (above).
  template <class T>
  Result<FlatArray<T>> GetLazy(std::string_view name) const {
    FLOWRAG_ASSIGN_OR_RETURN(LazyBytes lazy, GetLazyBytes(name, ArrayKindOf<T>(), sizeof(T)));
    return Borrowed<T>(name, lazy.bytes, std::move(lazy.check));
  }
  // A one-element array; Corruption when it holds another count.
  template <class T>
  Result<T> GetScalar(std::string_view name) const {
    FLOWRAG_ASSIGN_OR_RETURN(FlatArray<T> array, Get<T>(name));
    if (array.size() != 1) {
      return Status::Corruption("array " + std::string(name) + " is not one value");
    }
    return array[0];
  }
  Result<StringArena> GetStrings(std::string_view name) const;
  // GetStrings with the bytes ("<name>.b") verified lazily where the
  // source can: each string at its first read (StringArena::BorrowLazily).
  Result<StringArena> GetLazyStrings(std::string_view name) const;

 private:
  template <class T>
  Result<FlatArray<T>> Borrowed(std::string_view name, std::span<const std::byte> bytes,
                                std::shared_ptr<const LazyCheck> check) const {
    if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(T) != 0) {
      return Status::Corruption("array " + std::string(name) + " is misaligned");
    }
    return FlatArray<T>::BorrowLazily(
        std::span<const T>(reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)),
        keep(), std::move(check));
  }
};

// Both ends in memory: each Put copies the bytes into a buffer of its own
// (aligned for any element type), and Get borrows them (kept alive by the
// MemoryArrays' shared state, so adopted structures may outlive it). For
// tests of a structure's ExportArrays/AdoptArrays round trip, and to damage
// an array on purpose (MutableBytes).
class MemoryArrays final : public ArraySink, public ArraySource {
 public:
  MemoryArrays();
  Status PutBytes(std::string_view name, ArrayKind kind, size_t element_size,
                  std::span<const std::byte> bytes, bool random) override;
  Result<std::span<const std::byte>> GetBytes(std::string_view name, ArrayKind kind,
                                              size_t element_size) const override;
  bool Has(std::string_view name) const override;
  std::shared_ptr<const void> keep() const override;
  // The stored bytes of `name` (empty when absent), to alter in tests.
  std::span<std::byte> MutableBytes(std::string_view name);
  // Replaces `name`'s bytes (of the same kind) with `bytes`; arrays got from it
  // before are invalid after.
  Status Replace(std::string_view name, std::span<const std::byte> bytes);

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace flowrag

#endif  // FLOWRAG_COMMON_ARRAY_IO_H_
