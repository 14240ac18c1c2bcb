// Fuzz target: the lenient JSON parser used on model output
// (src/llm/json_repair.h ParseLlmJson), strict and with allow_truncated,
// and ExcerptAround.
//
// Input: the model's answer text. Checks that a success is an object or
// array that nlohmann re-parses from its dump (the repair must never produce
// invalid JSON) and that an error carries a message.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "fuzz_util.h"
#include "llm/json_repair.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (bool truncated : {false, true}) {
    flowrag::JsonRepairOptions options;
    options.allow_truncated = truncated;
    auto parsed = flowrag::ParseLlmJson(text, options);
    if (!parsed.ok()) {
      FUZZ_CHECK_ERROR(parsed.status());
      FUZZ_CHECK(parsed.status().code() != flowrag::StatusCode::kInternal,
                 parsed.status().ToString());
      continue;
    }
    FUZZ_CHECK(parsed->value.is_object() || parsed->value.is_array(), "not an object or array");
    const std::string dumped = parsed->value.dump(-1, ' ', false,
                                                  nlohmann::json::error_handler_t::replace);
    FUZZ_CHECK(nlohmann::json::accept(dumped), "repaired JSON does not re-parse");
  }
  if (size > 0) (void)flowrag::ExcerptAround(text, data[0] % size);
  return 0;
}
