// The common ArraySink / ArraySource (common/array_io.h) over segment files:
// each named array is one section, so a structure's ExportArrays writes a
// segment and its AdoptArrays reads the mapped file in place.
//
//   SegmentArraySink sink(writer.get());       // a SegmentWriter being written
//   FLOWRAG_RETURN_IF_ERROR(bm25.ExportArrays(sink));
//   SegmentArraySource source(reader);         // a SegmentReader::Open result
//   FLOWRAG_ASSIGN_OR_RETURN(Bm25Index again, Bm25Index::AdoptArrays(source, ...));
//
// Element kinds map one to one onto the format's element types
// (segment_format.h). A random-access array is written in 4 KiB blocks with
// the random hint (SectionAccess::kRandom), others in the writer's default
// blocks. GetBytes verifies the whole section (SegmentReader::SectionBytes:
// its checksums once per reader, O(length) the first time) and hands out
// the mapped bytes; the handle that keeps them alive is the reader.
//
// GetLazyBytes hands out a section unverified (its block checksums
// checked): the array's LazyCheck verifies ranges by their blocks at first
// use (SegmentReader::VerifyBytes), and Damage() is the reader's.
//
// Thread-safety: the sink as its writer (one thread); the source's methods
// from any thread.
#ifndef FLOWRAG_SEGMENT_SEGMENT_ARRAYS_H_
#define FLOWRAG_SEGMENT_SEGMENT_ARRAYS_H_

#include <memory>
#include <span>
#include <string_view>

#include "common/array_io.h"
#include "segment/segment_reader.h"
#include "segment/segment_writer.h"

namespace flowrag {

// The segment element type of an array kind.
ElementType SegmentElementType(ArrayKind kind);

class SegmentArraySink final : public ArraySink {
 public:
  // Writes into `writer` (not owned; outlives the sink).
  explicit SegmentArraySink(SegmentWriter* writer) : writer_(writer) {}
  Status PutBytes(std::string_view name, ArrayKind kind, size_t element_size,
                  std::span<const std::byte> bytes, bool random) override;

 private:
  SegmentWriter* writer_;
};

class SegmentArraySource final : public ArraySource {
 public:
  explicit SegmentArraySource(std::shared_ptr<const SegmentReader> reader)
      : reader_(std::move(reader)) {}
  Result<std::span<const std::byte>> GetBytes(std::string_view name, ArrayKind kind,
                                              size_t element_size) const override;
  Result<LazyBytes> GetLazyBytes(std::string_view name, ArrayKind kind,
                                 size_t element_size) const override;
  Status Damage() const override { return reader_->Damage(); }
  bool Has(std::string_view name) const override;
  std::shared_ptr<const void> keep() const override { return reader_; }
  const SegmentReader& reader() const { return *reader_; }

 private:
  // NotFound, or InvalidArgument when it was put with another kind.
  Status CheckKind(std::string_view name, ArrayKind kind, size_t element_size) const;

  std::shared_ptr<const SegmentReader> reader_;
};

}  // namespace flowrag

#endif  // FLOWRAG_SEGMENT_SEGMENT_ARRAYS_H_
