// OptionsRetriever<Options>: a retriever whose per-query options are the
// typed struct `Options`, parsed once.
//
// `Options` is default-constructible and copyable, and its
// `Status Override(ParamReader&)` reads the keys it knows and then checks
// the values (InvalidArgument naming the key). Its defaults are the
// method's (the papers').
//
// Configure() applies the configured defaults (EngineOptions::default_params:
// only the keys this method reads) to Options{} once and keeps the typed
// result. Per query, RequestOptions() returns it as is when the request has
// no params, or a copy with just the request's keys applied (each key parsed
// once, the checks run on the result), so a query no longer rebuilds its
// options from strings. Errors are those of parsing the merged strings, as
// before: unknown keys (ParamReader::CheckAllUsed) and bad values name the
// key. A configured default that does not parse is kept as a string and
// re-read with each request's params, which reproduces the old behaviour: the
// queries that do not override it fail with its message.
//
// Thread-safety: Configure() before the retriever is shared; Retrieve() and
// RequestOptions() are const and thread-safe.
#ifndef FLOWRAG_RETRIEVAL_OPTIONS_RETRIEVER_H_
#define FLOWRAG_RETRIEVAL_OPTIONS_RETRIEVER_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "retrieval/params.h"
#include "retrieval/retriever.h"

namespace flowrag {

template <typename Options>
class OptionsRetriever : public Retriever {
 public:
  Status ReadOptions(ParamReader& reader) const final {
    Options o;
    return o.Override(reader);
  }

  Status Configure(const std::map<std::string, std::string>& defaults) final {
    std::map<std::string, std::string> mine;  // the defaults this method reads
    std::vector<MethodOption> catalog;
    ParamReader catalog_reader(&catalog);
    FLOWRAG_RETURN_IF_ERROR(ReadOptions(catalog_reader));
    for (const MethodOption& o : catalog) {
      auto it = defaults.find(o.name);
      if (it != defaults.end()) mine[o.name] = it->second;
    }
    Options parsed;
    ParamReader reader(&mine);
    Status status = parsed.Override(reader);
    configured_ = status.ok() ? std::move(parsed) : Options{};
    unparsed_defaults_ = status.ok() ? std::map<std::string, std::string>{} : std::move(mine);
    return status;
  }

  // The options configured (Options{} before Configure).
  const Options& configured() const { return configured_; }

 protected:
  // The options of `request`: the configured ones, or *scratch holding them
  // with the request's params applied. The pointer is valid while this
  // retriever and *scratch live.
  Result<const Options*> RequestOptions(const RetrievalRequest& request,
                                        std::optional<Options>* scratch) const {
    const bool overrides = request.params != nullptr && !request.params->empty();
    if (unparsed_defaults_.empty() && !overrides) return &configured_;
    const std::map<std::string, std::string>* params = request.params;
    std::map<std::string, std::string> merged;
    if (!unparsed_defaults_.empty()) {
      merged = unparsed_defaults_;
      if (overrides) {
        for (const auto& [k, v] : *request.params) merged[k] = v;  // the query's own win
      }
      params = &merged;
    }
    scratch->emplace(configured_);
    ParamReader reader(params);
    FLOWRAG_RETURN_IF_ERROR((*scratch)->Override(reader));
    FLOWRAG_RETURN_IF_ERROR(reader.CheckAllUsed(Name()));
    return &**scratch;
  }

 private:
  Options configured_;
  // Non-empty only when the configured defaults did not parse.
  std::map<std::string, std::string> unparsed_defaults_;
};

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_OPTIONS_RETRIEVER_H_
