#include "embed/idf_table.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/hash.h"

namespace flowrag {
namespace {

constexpr char kMagic[8] = {'F', 'R', 'I', 'D', 'F', 'v', '1', '\0'};

void PutU64(std::string* out, uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  out->append(b, 8);
}
uint64_t GetU64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

}  // namespace

void IdfTable::Builder::AddDocument(const std::vector<uint64_t>& token_hashes) {
  ++num_docs_;
  scratch_.assign(token_hashes.begin(), token_hashes.end());
  std::sort(scratch_.begin(), scratch_.end());
  scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
  for (uint64_t h : scratch_) ++df_[h];
}

IdfTable IdfTable::Builder::Build() && {
  IdfTable t;
  t.num_docs_ = num_docs_;
  t.df_.assign(df_.begin(), df_.end());
  std::sort(t.df_.begin(), t.df_.end());
  t.Finalize();
  return t;
}

void IdfTable::Finalize() {
  uint64_t h = Mix64(num_docs_);
  for (const auto& [k, v] : df_) h = HashCombine(h, HashCombine(k, v));
  fingerprint_ = h;
}

uint32_t IdfTable::DocumentFrequency(uint64_t token_hash) const {
  auto it = std::lower_bound(df_.begin(), df_.end(), std::make_pair(token_hash, uint32_t{0}));
  return (it != df_.end() && it->first == token_hash) ? it->second : 0;
}

float IdfTable::Idf(uint64_t token_hash) const {
  double n = static_cast<double>(num_docs_);
  double df = DocumentFrequency(token_hash);
  return static_cast<float>(std::log((n + 1.0) / (df + 1.0)) + 1.0);
}

std::string IdfTable::Serialize() const {
  std::string out(kMagic, sizeof(kMagic));
  PutU64(&out, num_docs_);
  PutU64(&out, df_.size());
  out.reserve(out.size() + df_.size() * 12);
  for (const auto& [k, v] : df_) {
    PutU64(&out, k);
    char b[4];
    for (int i = 0; i < 4; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
    out.append(b, 4);
  }
  return out;
}

Result<IdfTable> IdfTable::Deserialize(std::string_view bytes) {
  if (bytes.size() < 24 || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return Status::Corruption("idf table: bad magic (expected FRIDFv1)");
  }
  IdfTable t;
  t.num_docs_ = GetU64(bytes.data() + 8);
  uint64_t count = GetU64(bytes.data() + 16);
  if (bytes.size() != 24 + count * 12) {
    return Status::Corruption("idf table: size " + std::to_string(bytes.size()) +
                              " does not match " + std::to_string(count) + " entries");
  }
  t.df_.resize(count);
  const char* p = bytes.data() + 24;
  for (uint64_t i = 0; i < count; ++i, p += 12) {
    uint32_t v = 0;
    for (int b = 0; b < 4; ++b) v |= static_cast<uint32_t>(static_cast<unsigned char>(p[8 + b])) << (8 * b);
    t.df_[i] = {GetU64(p), v};
    if (i > 0 && t.df_[i - 1].first >= t.df_[i].first) {
      return Status::Corruption("idf table: entries not strictly sorted at " + std::to_string(i));
    }
  }
  t.Finalize();
  return t;
}

}  // namespace flowrag
