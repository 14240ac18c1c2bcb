// AnswerOptions::Validate (declared in include/flowrag/options.h).
#include <string>

#include "flowrag/options.h"

namespace flowrag {

Status AnswerOptions::Validate() const {
  auto one_of = [](const std::string& v, std::initializer_list<const char*> allowed,
                   const char* field) -> Status {
    std::string list;
    for (const char* a : allowed) {
      if (v == a) return Status::Ok();
      list += std::string(list.empty() ? "" : "|") + a;
    }
    return Status::InvalidArgument(std::string(field) + " \"" + v + "\": expected " + list);
  };
  if (Status s = one_of(pipeline, {"auto", "single", "cot", "decompose", "schema"}, "pipeline"); !s.ok()) return s;
  if (Status s = one_of(answerer, {"auto", "extractive", "llm"}, "answerer"); !s.ok()) return s;
  if (Status s = one_of(style, {"short", "long"}, "style"); !s.ok()) return s;
  if (max_steps < 1 || max_steps > 10) {
    return Status::InvalidArgument("max_steps " + std::to_string(max_steps) + ": expected 1 to 10");
  }
  if (context_passages == 0) {
    return Status::InvalidArgument("context_passages: expected a positive number");
  }
  if (!(deadline_ms >= 0.0)) return Status::InvalidArgument("deadline_ms: expected ≥ 0");
  if (query.top_k == 0) return Status::InvalidArgument("top_k: expected a positive number");
  if (Status s = one_of(schema.analysis, {"auto", "offline", "llm"}, "schema.analysis"); !s.ok()) return s;
  if (Status s = one_of(schema.extension, {"auto", "off"}, "schema.extension"); !s.ok()) return s;
  if (!(schema.extension_min_confidence >= 0.0 && schema.extension_min_confidence <= 1.0)) {
    return Status::InvalidArgument("schema.extension_min_confidence: expected 0 to 1");
  }
  if (schema.max_retries > 5) {
    return Status::InvalidArgument("schema.max_retries " + std::to_string(schema.max_retries) +
                                   ": expected 0 to 5");
  }
  if (!(schema.min_similarity >= 0.0 && schema.min_similarity <= 1.0)) {
    return Status::InvalidArgument("schema.min_similarity: expected 0 to 1");
  }
  return Status::Ok();
}

}  // namespace flowrag
