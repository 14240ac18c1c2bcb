// Fuzz target: the schema contract YAML (include/flowrag/schema.h
// ParseContract: YAML parsing and the contract linter), then the round trip
// ToYaml -> ParseContract of every contract it accepts.
//
// Input: the YAML text.
#include <cstddef>
#include <cstdint>
#include <string>

#include "flowrag/schema.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto contract = flowrag::ParseContract(text, "schema.yaml");
  if (!contract.ok()) {
    FUZZ_CHECK_ERROR(contract.status());
    return 0;
  }
  const std::string yaml = flowrag::ToYaml(*contract);
  auto again = flowrag::ParseContract(yaml, "again.yaml");
  FUZZ_CHECK(again.ok(), "ToYaml output does not parse: " + again.status().ToString() +
                             "\n--- input ---\n" + text + "\n--- ToYaml ---\n" + yaml);
  FUZZ_CHECK(flowrag::ToYaml(*again) == yaml, "ToYaml is not stable over a round trip:\n" + yaml +
                                                  "\n---\n" + flowrag::ToYaml(*again));
  return 0;
}
