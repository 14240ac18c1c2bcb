#include "storage/store_state.h"

#include <string>
#include <vector>

#include "common/text.h"
#include "storage/meta_value.h"

namespace flowrag {
namespace {

// The meta keys of StoreState (doc/storage.md, table `meta`).
constexpr char kEmbedderKey[] = "embedder";
constexpr char kDenseModelKey[] = "dense_model";
constexpr char kHashDimensionKey[] = "hash_dimension";
constexpr char kLanguageKey[] = "language";
constexpr char kTokenizerKey[] = "tokenizer";
constexpr char kIdfTokenizerKey[] = "idf_tokenizer";
constexpr char kExtractorKey[] = "extractor";
constexpr char kSchemaContractKey[] = "schema_contract";

constexpr char kEmbedderKinds[] = "\"hash\", \"openai\" or \"custom\"";

std::string LanguageList() {
  std::string list;
  for (const std::string& l : TokenizerLanguages()) list += (list.empty() ? "" : ", ") + l;
  return list;
}

}  // namespace

bool IsEmbedderKind(std::string_view kind) {
  return kind == kHashEmbedderName || kind == kOpenAiEmbedderName || kind == kCustomEmbedderName;
}

Status StoreState::Damaged(std::string_view key, std::string_view value,
                           std::string_view expected) const {
  return Status::Corruption(path() + ": meta." + std::string(key) + " \"" +
                            std::string(value.substr(0, 40)) + "\": expected " +
                            std::string(expected) + " (the store is damaged or was edited)");
}

Result<std::optional<std::string>> StoreState::EmbedderKind() {
  FLOWRAG_ASSIGN_OR_RETURN(std::optional<std::string> kind, ReadMeta(kEmbedderKey));
  if (kind && !IsEmbedderKind(*kind)) return Damaged(kEmbedderKey, *kind, kEmbedderKinds);
  return kind;
}

Status StoreState::SetEmbedderKind(std::string_view kind) {
  if (!IsEmbedderKind(kind)) {
    return Status::InvalidArgument("embedder \"" + std::string(kind.substr(0, 40)) +
                                   "\": expected " + kEmbedderKinds);
  }
  return WriteMeta(kEmbedderKey, kind);
}

Result<std::optional<std::string>> StoreState::DenseModel() { return ReadMeta(kDenseModelKey); }

Status StoreState::SetDenseModel(std::string_view model) {
  return WriteMeta(kDenseModelKey, model);
}

Result<std::optional<size_t>> StoreState::HashDimension() {
  FLOWRAG_ASSIGN_OR_RETURN(std::optional<std::string> text, ReadMeta(kHashDimensionKey));
  if (!text) return std::optional<size_t>();
  FLOWRAG_ASSIGN_OR_RETURN(int64_t dimension, ParseMetaInt(path(), kHashDimensionKey, *text,
                                                           kMinHashDimension, kMaxHashDimension));
  return std::optional<size_t>(static_cast<size_t>(dimension));
}

Status StoreState::SetHashDimension(size_t dimension) {
  if (dimension < static_cast<size_t>(kMinHashDimension) ||
      dimension > static_cast<size_t>(kMaxHashDimension)) {
    return Status::InvalidArgument("hash dimension " + std::to_string(dimension) + ": expected " +
                                   std::to_string(kMinHashDimension) + " to " +
                                   std::to_string(kMaxHashDimension));
  }
  return WriteMeta(kHashDimensionKey, std::to_string(dimension));
}

Result<std::optional<std::string>> StoreState::Language() {
  FLOWRAG_ASSIGN_OR_RETURN(std::optional<std::string> language, ReadMeta(kLanguageKey));
  if (language && !ValidateLanguage(*language).ok()) {
    return Damaged(kLanguageKey, *language, "one of " + LanguageList());
  }
  return language;
}

Status StoreState::SetLanguage(std::string_view language) {
  FLOWRAG_RETURN_IF_ERROR(ValidateLanguage(language));
  return WriteMeta(kLanguageKey, language);
}

Result<std::optional<std::string>> StoreState::Tokenizer() { return ReadMeta(kTokenizerKey); }

Status StoreState::SetTokenizer(std::string_view signature) {
  return WriteMeta(kTokenizerKey, signature);
}

Result<std::optional<std::string>> StoreState::IdfTokenizer() { return ReadMeta(kIdfTokenizerKey); }

Status StoreState::SetIdfTokenizer(std::string_view signature) {
  return WriteMeta(kIdfTokenizerKey, signature);
}

Result<std::optional<std::string>> StoreState::Extractor() { return ReadMeta(kExtractorKey); }

Status StoreState::SetExtractor(std::string_view extractor) {
  return WriteMeta(kExtractorKey, extractor);
}

Result<std::optional<std::string>> StoreState::SchemaContractYaml() {
  return ReadMeta(kSchemaContractKey);
}

Status StoreState::SetSchemaContractYaml(std::string_view yaml) {
  return WriteMeta(kSchemaContractKey, yaml);
}

}  // namespace flowrag
