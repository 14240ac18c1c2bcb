#include "common/array_io.h"

#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace flowrag {

Status ArraySink::PutStrings(std::string_view name, const StringArena& strings, bool random) {
  FLOWRAG_RETURN_IF_ERROR(strings.bytes().VerifyAll());  // a lazy arena's damage is not copied
  std::string base(name);
  FLOWRAG_RETURN_IF_ERROR(Put<uint64_t>(base + ".o", strings.offsets().span()));
  return Put<char>(base + ".b", strings.bytes().span(), random);
}

Result<ArraySource::LazyBytes> ArraySource::GetLazyBytes(std::string_view name, ArrayKind kind,
                                                         size_t element_size) const {
  FLOWRAG_ASSIGN_OR_RETURN(std::span<const std::byte> bytes, GetBytes(name, kind, element_size));
  return LazyBytes{bytes, nullptr};
}

Result<StringArena> ArraySource::GetStrings(std::string_view name) const {
  std::string base(name);
  FLOWRAG_ASSIGN_OR_RETURN(FlatArray<uint64_t> offsets, Get<uint64_t>(base + ".o"));
  FLOWRAG_ASSIGN_OR_RETURN(FlatArray<char> bytes, Get<char>(base + ".b"));
  Result<StringArena> arena = StringArena::Borrow(offsets.span(), bytes.span(), keep());
  if (!arena.ok()) return Status::Corruption(base + ": " + arena.status().message());
  return arena;
}

Result<StringArena> ArraySource::GetLazyStrings(std::string_view name) const {
  std::string base(name);
  FLOWRAG_ASSIGN_OR_RETURN(FlatArray<uint64_t> offsets, Get<uint64_t>(base + ".o"));
  FLOWRAG_ASSIGN_OR_RETURN(FlatArray<char> bytes, GetLazy<char>(base + ".b"));
  Result<StringArena> arena = StringArena::BorrowLazily(offsets.span(), std::move(bytes), keep());
  if (!arena.ok()) return Status::Corruption(base + ": " + arena.status().message());
  return arena;
}

struct MemoryArrays::State {
  struct Array {
    ArrayKind kind;
    size_t element_size;
    std::vector<std::max_align_t> storage;  // aligned for any element type
    size_t bytes = 0;
    std::byte* data() { return reinterpret_cast<std::byte*>(storage.data()); }
  };
  std::map<std::string, Array, std::less<>> arrays;
};

MemoryArrays::MemoryArrays() : state_(std::make_shared<State>()) {}

Status MemoryArrays::PutBytes(std::string_view name, ArrayKind kind, size_t element_size,
                              std::span<const std::byte> bytes, bool /*random*/) {
  if (state_->arrays.count(name) != 0) {
    return Status::InvalidArgument("array " + std::string(name) + " was put twice");
  }
  State::Array& array = state_->arrays[std::string(name)];
  array.kind = kind;
  array.element_size = element_size;
  array.storage.resize((bytes.size() + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t));
  array.bytes = bytes.size();
  if (!bytes.empty()) std::memcpy(array.data(), bytes.data(), bytes.size());
  return Status::Ok();
}

Result<std::span<const std::byte>> MemoryArrays::GetBytes(std::string_view name, ArrayKind kind,
                                                          size_t element_size) const {
  auto it = state_->arrays.find(name);
  if (it == state_->arrays.end()) return Status::NotFound("no array " + std::string(name));
  if (it->second.kind != kind || it->second.element_size != element_size) {
    return Status::InvalidArgument("array " + std::string(name) + " holds another element type");
  }
  return std::span<const std::byte>(it->second.data(), it->second.bytes);
}

bool MemoryArrays::Has(std::string_view name) const { return state_->arrays.count(name) != 0; }

std::shared_ptr<const void> MemoryArrays::keep() const { return state_; }

std::span<std::byte> MemoryArrays::MutableBytes(std::string_view name) {
  auto it = state_->arrays.find(name);
  if (it == state_->arrays.end()) return {};
  return {it->second.data(), it->second.bytes};
}

Status MemoryArrays::Replace(std::string_view name, std::span<const std::byte> bytes) {
  auto it = state_->arrays.find(name);
  if (it == state_->arrays.end()) return Status::NotFound("no array " + std::string(name));
  const ArrayKind kind = it->second.kind;
  const size_t element_size = it->second.element_size;
  state_->arrays.erase(it);
  return PutBytes(name, kind, element_size, bytes, false);
}

}  // namespace flowrag
