// StoreState: what a store says about how it was indexed, behind one typed
// interface: its meta values (doc/storage.md, table `meta`) and the
// built-in embedder's fitted table (table `embedder_state`).
//
// One read and one write per meta key, each parsing or formatting the value
// here, once:
//
//   key              read / write                        value
//   embedder         EmbedderKind / SetEmbedderKind      "hash", "openai" or "custom"
//   dense_model      DenseModel / SetDenseModel          model id of the dense index
//   hash_dimension   HashDimension / SetHashDimension    decimal, 8 to 65536
//   language         Language / SetLanguage              ValidateLanguage (common/text.h)
//   tokenizer        Tokenizer / SetTokenizer            TokenizerSignature (information)
//   idf_tokenizer    IdfTokenizer / SetIdfTokenizer      the signature the IDF table was
//                                                        fitted under
//   extractor        Extractor / SetExtractor            the last run's extractor
//   schema_contract  SchemaContractYaml / Set...         the contract's YAML (ParseContract,
//                                                        include/flowrag/schema.h)
//
// A read returns nullopt for an absent key (a store not indexed yet, or
// indexed before the key existed) and Corruption naming the store and the
// key (`<path>: meta.<key> ...`) for a value no write here would have
// stored: the store was damaged or edited. A write refuses a value it could
// not read back (InvalidArgument) and writes only a changed value, in one
// transaction that also increments meta.generation (a changed value can
// change what a snapshot reads); the bytes stored are those every earlier
// version wrote (the keys and decimal text of doc/storage.md).
//
// The other meta keys are the store's own, written by no caller: `magic`
// and `format_version` (checked on open; Store::format_version()),
// `generation` (bumped by every write that can change a snapshot; read
// with SnapshotSource::Generation) and `titles_generation` (bumped by
// document writes; GraphSink::TitlesGeneration).
//
// Thread-safety: as the implementation (Store serialises every call).
#ifndef FLOWRAG_STORAGE_STORE_STATE_H_
#define FLOWRAG_STORAGE_STORE_STATE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "flowrag/status.h"

namespace flowrag {

// The values of meta.embedder: the built-in hashed embedder, an
// OpenAI-compatible one, the caller's own (EngineOptions::custom_embedder).
inline constexpr char kHashEmbedderName[] = "hash";
inline constexpr char kOpenAiEmbedderName[] = "openai";
inline constexpr char kCustomEmbedderName[] = "custom";
// True for the three names above.
bool IsEmbedderKind(std::string_view kind);

// The range of meta.hash_dimension (and of HashedEmbedderOptions::dimension).
inline constexpr int64_t kMinHashDimension = 8;
inline constexpr int64_t kMaxHashDimension = 65536;

class StoreState {
 public:
  virtual ~StoreState() = default;

  // The location the store was opened with, for messages.
  virtual const std::string& path() const = 0;

  // ---- Meta values (the table above).
  Result<std::optional<std::string>> EmbedderKind();
  Status SetEmbedderKind(std::string_view kind);
  Result<std::optional<std::string>> DenseModel();
  Status SetDenseModel(std::string_view model);
  Result<std::optional<size_t>> HashDimension();
  Status SetHashDimension(size_t dimension);
  Result<std::optional<std::string>> Language();
  Status SetLanguage(std::string_view language);
  Result<std::optional<std::string>> Tokenizer();
  Status SetTokenizer(std::string_view signature);
  Result<std::optional<std::string>> IdfTokenizer();
  Status SetIdfTokenizer(std::string_view signature);
  Result<std::optional<std::string>> Extractor();
  Status SetExtractor(std::string_view extractor);
  Result<std::optional<std::string>> SchemaContractYaml();
  Status SetSchemaContractYaml(std::string_view yaml);

  // ---- The fitted state of an embedder, by name (kHashEmbedderName: the
  // IDF table, embed/hashed_embedder.h), with the number of passages it was
  // fitted on.
  virtual Result<std::optional<std::string>> GetEmbedderState(std::string_view name) = 0;
  virtual Status PutEmbedderState(std::string_view name, std::string_view blob,
                                  int64_t fitted_passages) = 0;
  // -1 when there is none.
  virtual Result<int64_t> EmbedderStateFittedPassages(std::string_view name) = 0;

 protected:
  // The raw value of meta.`key`, nullopt when absent.
  virtual Result<std::optional<std::string>> ReadMeta(std::string_view key) = 0;
  // Stores `value` under `key` when it differs from the stored one, and then
  // increments meta.generation, in one transaction.
  virtual Status WriteMeta(std::string_view key, std::string_view value) = 0;

 private:
  // Corruption: `<path>: meta.<key> "<value>": expected <expected>`.
  Status Damaged(std::string_view key, std::string_view value, std::string_view expected) const;
};

}  // namespace flowrag

#endif  // FLOWRAG_STORAGE_STORE_STATE_H_
