// EM / F1 of eval.h, after the official SQuAD v1.1 and HotpotQA scripts.
#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "flowrag/eval.h"

namespace flowrag {
namespace {

std::vector<std::string> Words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(std::move(w));
  return out;
}

double F1One(const std::string& pred, const std::string& gold) {
  const std::string p = NormalizeAnswer(pred), g = NormalizeAnswer(gold);
  auto special = [](const std::string& s) { return s == "yes" || s == "no" || s == "noanswer"; };
  if ((special(p) || special(g)) && p != g) return 0.0;
  const std::vector<std::string> pt = Words(p), gt = Words(g);
  if (pt.empty() || gt.empty()) return pt == gt ? 1.0 : 0.0;
  std::map<std::string, int> counts;
  for (const std::string& w : gt) ++counts[w];
  int common = 0;
  for (const std::string& w : pt) {
    auto it = counts.find(w);
    if (it != counts.end() && it->second > 0) {
      --it->second;
      ++common;
    }
  }
  if (common == 0) return 0.0;
  const double precision = static_cast<double>(common) / static_cast<double>(pt.size());
  const double recall = static_cast<double>(common) / static_cast<double>(gt.size());
  return 2.0 * precision * recall / (precision + recall);
}

}  // namespace

std::string NormalizeAnswer(std::string_view answer) {
  std::string lower;
  for (char c : answer) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 128 && std::ispunct(u)) continue;
    lower += static_cast<char>(std::tolower(u));
  }
  std::string out;
  for (const std::string& w : Words(lower)) {
    if (w == "a" || w == "an" || w == "the") continue;
    out += (out.empty() ? "" : " ") + w;
  }
  return out;
}

double ExactMatch(std::string_view prediction, const std::vector<std::string>& golds) {
  const std::string p = NormalizeAnswer(prediction);
  for (const std::string& g : golds) {
    if (p == NormalizeAnswer(g)) return 1.0;
  }
  return 0.0;
}

double AnswerF1(std::string_view prediction, const std::vector<std::string>& golds) {
  double best = 0.0;
  for (const std::string& g : golds) best = std::max(best, F1One(std::string(prediction), g));
  return best;
}

}  // namespace flowrag
