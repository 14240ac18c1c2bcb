// ParamReader: per-query option overrides ("bm25.k1=0.9") applied to a
// method's options struct, with typed parsing and a clear error for unknown
// names or bad values.
//
// Usage: each options struct reads the keys it knows; afterwards
// CheckAllUsed() rejects anything nobody read. A catalog reader instead
// records each key read with its type and the value it holds (the default,
// when the struct was default-constructed): Engine::MethodOptions.
#ifndef FLOWRAG_RETRIEVAL_PARAMS_H_
#define FLOWRAG_RETRIEVAL_PARAMS_H_

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "flowrag/status.h"
#include "flowrag/types.h"

namespace flowrag {

class ParamReader {
 public:
  // `params` may be null (no overrides). Not owned; must outlive the reader.
  explicit ParamReader(const std::map<std::string, std::string>* params) : params_(params) {}
  // A catalog reader: every Read() appends {key, type, *out} to `catalog`
  // and leaves *out unchanged. Not owned; must outlive the reader.
  explicit ParamReader(std::vector<MethodOption>* catalog) : params_(nullptr), catalog_(catalog) {}

  // Each leaves *out unchanged when `key` is absent.
  Status Read(std::string_view key, double* out);
  Status Read(std::string_view key, size_t* out);
  Status Read(std::string_view key, bool* out);
  Status Read(std::string_view key, std::string* out);

  // InvalidArgument naming every key no options struct recognised.
  Status CheckAllUsed(std::string_view method) const;

 private:
  const std::string* Find(std::string_view key);
  // True (and the option recorded) for a catalog reader.
  bool Catalogued(std::string_view key, const char* type, std::string value);

  const std::map<std::string, std::string>* params_;
  std::vector<MethodOption>* catalog_ = nullptr;
  std::set<std::string> used_;
};

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_PARAMS_H_
