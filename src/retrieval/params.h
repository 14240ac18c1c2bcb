// ParamReader: per-query option overrides ("bm25.k1=0.9") applied to a
// method's options struct, with typed parsing and a clear error for unknown
// names or bad values.
//
// Usage: each options struct reads the keys it knows; afterwards
// CheckAllUsed() rejects anything nobody read.
#ifndef FLOWRAG_RETRIEVAL_PARAMS_H_
#define FLOWRAG_RETRIEVAL_PARAMS_H_

#include <map>
#include <set>
#include <string>
#include <string_view>

#include "flowrag/status.h"

namespace flowrag {

class ParamReader {
 public:
  // `params` may be null (no overrides). Not owned; must outlive the reader.
  explicit ParamReader(const std::map<std::string, std::string>* params) : params_(params) {}

  // Each leaves *out unchanged when `key` is absent.
  Status Read(std::string_view key, double* out);
  Status Read(std::string_view key, size_t* out);
  Status Read(std::string_view key, bool* out);
  Status Read(std::string_view key, std::string* out);

  // InvalidArgument naming every key no options struct recognised.
  Status CheckAllUsed(std::string_view method) const;

 private:
  const std::string* Find(std::string_view key);

  const std::map<std::string, std::string>* params_;
  std::set<std::string> used_;
};

}  // namespace flowrag

#endif  // FLOWRAG_RETRIEVAL_PARAMS_H_
