// The checks a graph structure runs on arrays it adopts from an ArraySource
// (common/array_io.h) before reading them: the source verifies bytes, never
// meaning, so every offset and index of a damaged or crafted file is checked
// here against its range, and a bad one is Corruption naming the array and
// the index (KnowledgeGraph::AdoptArrays, WalkGraph::AdoptArrays). The
// scans are common/array_scan.h's, in vectorized chunks.
//
// Thread-safety: pure functions. Each is O(length of the array).
#ifndef FLOWRAG_GRAPH_ARRAY_CHECKS_H_
#define FLOWRAG_GRAPH_ARRAY_CHECKS_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "common/array_io.h"
#include "common/array_scan.h"
#include "common/flat_array.h"
#include "flowrag/status.h"

namespace flowrag::array_checks {

inline Status Bad(std::string_view array, size_t index, const std::string& what) {
  return Status::Corruption(std::string(array) + "[" + std::to_string(index) + "]: " + what);
}

// An array of another element type than its reader expects is Corruption
// (the file is not what its writer wrote), not the source's InvalidArgument.
template <class T>
Result<T> TypeMismatchIsCorruption(Result<T> got) {
  if (!got.ok() && got.status().code() == StatusCode::kInvalidArgument) {
    return Status::Corruption(got.status().message());
  }
  return got;
}

template <class T>
Result<FlatArray<T>> Get(const ArraySource& source, std::string_view name) {
  return TypeMismatchIsCorruption(source.Get<T>(name));
}

// An array borrowed lazily where the source can (a segment: verified as
// its reader reads it, FlatArray::Verify), verified now where it cannot.
template <class T>
Result<FlatArray<T>> GetLazy(const ArraySource& source, std::string_view name) {
  return TypeMismatchIsCorruption(source.GetLazy<T>(name));
}

inline Result<StringArena> GetStrings(const ArraySource& source, std::string_view name) {
  return TypeMismatchIsCorruption(source.GetStrings(name));
}

inline Result<StringArena> GetLazyStrings(const ArraySource& source, std::string_view name) {
  return TypeMismatchIsCorruption(source.GetLazyStrings(name));
}

template <class T>
Result<T> GetScalar(const ArraySource& source, std::string_view name) {
  FLOWRAG_ASSIGN_OR_RETURN(FlatArray<T> array, Get<T>(source, name));
  if (array.size() != 1) {
    return Status::Corruption(std::string(name) + ": " + std::to_string(array.size()) +
                              " values, not one");
  }
  return array[0];
}

// `array` holds `expected` elements.
template <class T>
Status CheckSize(std::string_view name, std::span<const T> array, size_t expected) {
  if (array.size() == expected) return Status::Ok();
  return Status::Corruption(std::string(name) + ": " + std::to_string(array.size()) +
                            " elements, expected " + std::to_string(expected));
}

// Offsets of `rows` rows into an array of `entries` elements: rows + 1 of
// them, the first 0, non-decreasing, the last `entries`.
inline Status CheckOffsets(std::string_view name, std::span<const uint64_t> offsets, size_t rows,
                           size_t entries) {
  FLOWRAG_RETURN_IF_ERROR(CheckSize(name, offsets, rows + 1));
  if (offsets[0] != 0) return Bad(name, 0, "first offset is not 0");
  if (const size_t i = FirstDecrease(offsets); i < offsets.size()) {
    return Bad(name, i, "offset decreases");
  }
  if (offsets.back() != entries) {
    return Bad(name, rows,
               "last offset " + std::to_string(offsets.back()) + " is not the " +
                   std::to_string(entries) + " entries it indexes");
  }
  return Status::Ok();
}

// Every value < `limit` (`what`: what it counts, for the message).
// (`values`: any contiguous array of unsigned integers: a span, a
// FlatArray, a vector.)
template <class Array>
Status CheckBelow(std::string_view name, const Array& values, size_t limit,
                  std::string_view what) {
  using T = std::remove_cvref_t<decltype(values[0])>;
  static_assert(std::is_unsigned_v<T>);
  if (limit > std::numeric_limits<T>::max()) return Status::Ok();  // every T is below it
  const size_t i = FirstOutside<T>(values.data(), 0, values.size(), 0, static_cast<T>(limit));
  if (i == values.size()) return Status::Ok();
  return Bad(name, i,
             std::to_string(values[i]) + " out of range (" + std::to_string(limit) + " " +
                 std::string(what) + ")");
}

// Every value finite (not an infinity, not a NaN).
template <class T>
Status CheckFinite(std::string_view name, std::span<const T> values) {
  if (const size_t i = FirstNonFinite(values); i < values.size()) return Bad(name, i, "not finite");
  return Status::Ok();
}

}  // namespace flowrag::array_checks

#endif  // FLOWRAG_GRAPH_ARRAY_CHECKS_H_
