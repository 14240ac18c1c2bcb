#include "segment/segment_arrays.h"

#include <string>

namespace flowrag {

ElementType SegmentElementType(ArrayKind kind) {
  switch (kind) {
    case ArrayKind::kU8: return ElementType::kU8;
    case ArrayKind::kI8: return ElementType::kI8;
    case ArrayKind::kU16: return ElementType::kU16;
    case ArrayKind::kI16: return ElementType::kI16;
    case ArrayKind::kU32: return ElementType::kU32;
    case ArrayKind::kI32: return ElementType::kI32;
    case ArrayKind::kU64: return ElementType::kU64;
    case ArrayKind::kI64: return ElementType::kI64;
    case ArrayKind::kF32: return ElementType::kF32;
    case ArrayKind::kF64: return ElementType::kF64;
  }
  return ElementType::kOpaque;
}

Status SegmentArraySink::PutBytes(std::string_view name, ArrayKind kind, size_t element_size,
                                  std::span<const std::byte> bytes, bool random) {
  SectionOptions options;
  if (random) {
    options.block_bytes = 4096;
    options.access = SectionAccess::kRandom;
  }
  return writer_->AddSectionBytes(name, SegmentElementType(kind),
                                  static_cast<uint32_t>(element_size), bytes, options);
}

namespace {

// A section's checks by its blocks (SegmentReader::VerifyBytes).
class SectionCheck final : public LazyCheck {
 public:
  SectionCheck(std::shared_ptr<const SegmentReader> reader, size_t index)
      : reader_(std::move(reader)), index_(index) {}
  Status Verify(uint64_t first, uint64_t count) const override {
    return reader_->VerifyBytes(index_, first, count);
  }
  void Report(const Status& damage) const override { reader_->RecordDamage(damage); }

 private:
  std::shared_ptr<const SegmentReader> reader_;
  size_t index_;
};

}  // namespace

Status SegmentArraySource::CheckKind(std::string_view name, ArrayKind kind,
                                     size_t element_size) const {
  const SectionInfo* section = reader_->FindSection(name);
  if (section == nullptr) {
    return Status::NotFound("segment " + reader_->path() + " has no array " + std::string(name));
  }
  if (section->element_type != SegmentElementType(kind) || section->element_size != element_size) {
    return Status::InvalidArgument("segment " + reader_->path() + ": array " + std::string(name) +
                                   " holds another element type");
  }
  return Status::Ok();
}

Result<std::span<const std::byte>> SegmentArraySource::GetBytes(std::string_view name,
                                                                ArrayKind kind,
                                                                size_t element_size) const {
  FLOWRAG_RETURN_IF_ERROR(CheckKind(name, kind, element_size));
  return reader_->SectionBytes(name);
}

Result<ArraySource::LazyBytes> SegmentArraySource::GetLazyBytes(std::string_view name,
                                                                ArrayKind kind,
                                                                size_t element_size) const {
  FLOWRAG_RETURN_IF_ERROR(CheckKind(name, kind, element_size));
  size_t index = 0;
  FLOWRAG_ASSIGN_OR_RETURN(std::span<const std::byte> bytes,
                           reader_->UnverifiedBytes(name, &index));
  return LazyBytes{bytes, std::make_shared<const SectionCheck>(reader_, index)};
}

bool SegmentArraySource::Has(std::string_view name) const {
  return reader_->FindSection(name) != nullptr;
}

}  // namespace flowrag
