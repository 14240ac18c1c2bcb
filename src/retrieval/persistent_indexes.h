// The per-snapshot query indexes retrieval derives (Snapshot::Derived) that
// a snapshot's segment keeps, so an open adopts them in place instead of
// building them at its first query: LocalFacts ("lf.*": the fact texts of
// each passage, the fact vectors' rows) and FactBm25 ("fb.*": BM25 over the
// fact texts). The engine hands them to every snapshot it builds
// (SnapshotOptions::derived).
//
// Thread-safety: the list and its entries are immutable statics.
#ifndef FLOWRAG_RETRIEVAL_PERSISTENT_INDEXES_H_
#define FLOWRAG_RETRIEVAL_PERSISTENT_INDEXES_H_

#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "common/array_io.h"
#include "graph/snapshot.h"

namespace flowrag {

const std::vector<const PersistentDerived*>& PersistentQueryIndexes();

// The PersistentDerived of an index type T with
//   static std::shared_ptr<const T> For(const Snapshot&);
//   Status ExportArrays(ArraySink&) const;
//   static Result<std::shared_ptr<const T>> AdoptArrays(const Snapshot&, const ArraySource&);
// whose For derives it under `tag`.
template <class T>
PersistentDerived PersistentIndexOf(const void* tag, std::string_view name, int format) {
  return PersistentDerived{
      .tag = tag,
      .name = name,
      .format = format,
      .make = [](const Snapshot& s) -> std::shared_ptr<const void> { return T::For(s); },
      .export_arrays =
          [](const void* value, ArraySink& sink) {
            return static_cast<const T*>(value)->ExportArrays(sink);
          },
      .adopt = [](const Snapshot& s,
                  const ArraySource& source) -> Result<std::shared_ptr<const void>> {
        FLOWRAG_ASSIGN_OR_RETURN(std::shared_ptr<const T> index, T::AdoptArrays(s, source));
        return std::shared_ptr<const void>(std::move(index));
      }};
}

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_PERSISTENT_INDEXES_H_
