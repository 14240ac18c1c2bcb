// DiscoverContractWithLlm (include/flowrag/schema.h): two-pass discovery with
// the chat model the environment configures.
#include "flowrag/schema.h"
#include "llm/chat_client.h"
#include "schema/llm_discovery.h"

namespace flowrag {

Result<SchemaContract> DiscoverContractWithLlm(const InducedSchema& schema, const std::string& dir,
                                               const std::string& exclusions,
                                               std::vector<std::string>* notes) {
  if (!ChatModelConfigured()) {
    return Status::FailedPrecondition(
        "schema discovery with an LLM needs FLOWRAG_LLM_BASE_URL / FLOWRAG_LLM_MODEL");
  }
  FLOWRAG_ASSIGN_OR_RETURN(OpenAiChatOptions chat_options, OpenAiChatOptionsFromEnv({}));
  FLOWRAG_ASSIGN_OR_RETURN(auto chat, OpenAiChatClient::Create(chat_options));
  LlmDiscoveryOptions options;
  options.exclusions = exclusions;
  LlmDiscoveryReport report;
  FLOWRAG_ASSIGN_OR_RETURN(SchemaContract contract,
                           DiscoverWithLlm(schema, dir, *chat, options, &report));
  if (notes) {
    notes->push_back("model " + report.model + ", FieldValidity " +
                     std::to_string(report.FieldValidity()) + ", " +
                     std::to_string(report.pass1.calls + report.pass2.calls) + " calls, " +
                     std::to_string(report.pass1.prompt_tokens + report.pass2.prompt_tokens) +
                     " prompt + " +
                     std::to_string(report.pass1.completion_tokens + report.pass2.completion_tokens) +
                     " completion tokens");
    for (const LlmPassReport* pass : {&report.pass1, &report.pass2}) {
      for (const std::string& s : pass->check.invalid) notes->push_back("invalid reference: " + s);
      for (const std::string& s : pass->check.dropped) notes->push_back("dropped: " + s);
    }
    for (const std::string& s : report.merge) notes->push_back("merge: " + s);
  }
  return contract;
}

}  // namespace flowrag
