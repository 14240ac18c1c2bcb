#include "models/embedder_setup.h"

#include "embed/hashed_embedder.h"
#include "llm/openai_embedder.h"

namespace flowrag {
namespace {

Result<HashedEmbedderOptions> HashOptions(StoreState& state, const EngineOptions& options) {
  HashedEmbedderOptions o;
  o.dimension = options.hash_dimension;
  FLOWRAG_ASSIGN_OR_RETURN(std::optional<size_t> stored_dim, state.HashDimension());
  if (stored_dim) o.dimension = *stored_dim;
  FLOWRAG_ASSIGN_OR_RETURN(o.language, ResolveLanguage(state, options));
  FLOWRAG_RETURN_IF_ERROR(o.Validate());
  return o;
}

// A store indexed with a custom embedder, opened without it.
class MissingCustomEmbedder final : public Embedder {
 public:
  MissingCustomEmbedder(std::string store, std::string model)
      : store_(std::move(store)), model_(std::move(model)) {}
  std::string ModelId() const override { return model_; }
  size_t Dimension() const override { return 0; }
  Result<FloatMatrix> Embed(std::span<const std::string>) override {
    return Status::FailedPrecondition(store_ + ": indexed with the custom embedder \"" + model_ +
                                      "\"; open it with that embedder to embed new text");
  }

 private:
  const std::string store_, model_;
};

}  // namespace

Result<std::string> ResolveLanguage(StoreState& state, const EngineOptions& options) {
  if (!options.language.empty()) FLOWRAG_RETURN_IF_ERROR(ValidateLanguage(options.language));
  FLOWRAG_ASSIGN_OR_RETURN(std::optional<std::string> stored, state.Language());
  if (!stored) return options.language.empty() ? std::string(kDefaultLanguage) : options.language;
  if (!options.language.empty() && options.language != *stored) {
    return Status::FailedPrecondition(state.path() + ": indexed with language \"" + *stored +
                                      "\", opened with language \"" + options.language +
                                      "\"; open it with \"" + *stored +
                                      "\" (or no language), or index into a new store");
  }
  return *stored;
}

Result<std::string> ResolveEmbedderKind(StoreState& state, const EngineOptions& options) {
  std::string kind = options.embedder;
  if (kind.empty() && options.custom_embedder != nullptr) kind = kCustomEmbedderName;
  if (kind.empty()) {
    FLOWRAG_ASSIGN_OR_RETURN(std::optional<std::string> stored, state.EmbedderKind());
    kind = stored.value_or(kHashEmbedderName);
  }
  if (!IsEmbedderKind(kind)) {
    return Status::InvalidArgument("embedder \"" + kind +
                                   "\": expected \"hash\", \"openai\" or \"custom\"");
  }
  if (kind == kCustomEmbedderName && options.custom_embedder == nullptr &&
      options.embedder == kCustomEmbedderName) {
    return Status::InvalidArgument("embedder \"custom\": no EngineOptions::custom_embedder given");
  }
  return kind;
}

Result<std::shared_ptr<Embedder>> LoadEmbedder(StoreState& state, const std::string& kind,
                                               const EngineOptions& options) {
  if (kind == kCustomEmbedderName) {
    if (options.custom_embedder != nullptr) return options.custom_embedder;
    FLOWRAG_ASSIGN_OR_RETURN(std::optional<std::string> model, state.DenseModel());
    return std::shared_ptr<Embedder>(
        std::make_shared<MissingCustomEmbedder>(state.path(), model.value_or("(unknown)")));
  }
  if (kind == kOpenAiEmbedderName) {
    OpenAiEmbedderOptions o;
    if (options.openai_embedder) {
      o = *options.openai_embedder;
    } else {
      FLOWRAG_ASSIGN_OR_RETURN(o, OpenAiEmbedderOptionsFromEnv(OpenAiEmbedderOptions{}));
    }
    FLOWRAG_ASSIGN_OR_RETURN(auto embedder, OpenAiEmbedder::Create(o));
    return std::shared_ptr<Embedder>(std::move(embedder));
  }
  FLOWRAG_ASSIGN_OR_RETURN(HashedEmbedderOptions o, HashOptions(state, options));
  auto idf = std::make_shared<IdfTable>();
  FLOWRAG_ASSIGN_OR_RETURN(auto blob, state.GetEmbedderState(kHashEmbedderName));
  if (blob) {
    auto table = IdfTable::Deserialize(*blob);
    if (!table.ok()) return table.status().WithContext(state.path() + ": embedder_state.hash");
    idf = std::make_shared<IdfTable>(std::move(table).value());
  }
  return std::shared_ptr<Embedder>(std::make_shared<HashedEmbedder>(o, std::move(idf)));
}

Result<std::shared_ptr<Embedder>> MaybeRefitEmbedder(StoreState& state, DocumentStore& documents,
                                                     GraphSink& graph, const std::string& kind,
                                                     const EngineOptions& options,
                                                     std::shared_ptr<Embedder> current, bool force,
                                                     double growth, bool* refitted) {
  *refitted = false;
  if (kind != kHashEmbedderName) return current;
  FLOWRAG_ASSIGN_OR_RETURN(int64_t fitted, state.EmbedderStateFittedPassages(kHashEmbedderName));
  FLOWRAG_ASSIGN_OR_RETURN(HashedEmbedderOptions o, HashOptions(state, options));
  const std::string tokenizer = TokenizerSignature(o.language);
  FLOWRAG_ASSIGN_OR_RETURN(std::optional<std::string> fitted_under, state.IdfTokenizer());
  // The largest passage id bounds their number: the count (O(rows), 7 ms
  // at 10^5 passages, on every insert) only when that bound reaches the
  // growth that makes the table stale.
  if (!force && fitted > 0 && fitted_under.value_or("") == tokenizer) {
    FLOWRAG_ASSIGN_OR_RETURN(int64_t max_id, documents.LargestPassageId());
    if (static_cast<double>(max_id) < (1.0 + growth) * fitted) return current;
  }
  FLOWRAG_ASSIGN_OR_RETURN(auto counts, documents.CountDocumentsAndPassages());
  const int64_t passages = counts.second;
  const bool stale = fitted <= 0 || static_cast<double>(passages) >= (1.0 + growth) * fitted ||
                     fitted_under.value_or("") != tokenizer;
  if (!force && !stale) return current;
  if (passages == 0) return current;

  IdfTable::Builder builder;
  FLOWRAG_RETURN_IF_ERROR(documents.ForEachPassageText([&](const PassageToEmbed& p) -> Status {
    builder.AddDocument(TokenHashes(p.text, o.language));
    return Status::Ok();
  }));
  auto idf = std::make_shared<IdfTable>(std::move(builder).Build());
  // Every name's vector changes with the table, so every synonym edge is
  // computed again (else the edges would depend on the order in which
  // corpora came in); before the table is stored, so that a crash in
  // between refits and marks again.
  FLOWRAG_RETURN_IF_ERROR(graph.MarkAllSynonymsPending());
  FLOWRAG_RETURN_IF_ERROR(state.PutEmbedderState(kHashEmbedderName, idf->Serialize(), passages));
  FLOWRAG_RETURN_IF_ERROR(state.SetIdfTokenizer(tokenizer));
  FLOWRAG_RETURN_IF_ERROR(state.SetHashDimension(o.dimension));
  *refitted = true;
  return std::shared_ptr<Embedder>(std::make_shared<HashedEmbedder>(o, std::move(idf)));
}

}  // namespace flowrag
