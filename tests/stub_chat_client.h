// Test helper: an OpenAI-compatible chat client aimed at a loopback stub
// (no key, no retries, no response cache). For tests only.
#ifndef FLOWRAG_TESTS_STUB_CHAT_CLIENT_H_
#define FLOWRAG_TESTS_STUB_CHAT_CLIENT_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "llm/chat_client.h"

namespace flowrag::testing {

// The client for `base_url` with model `model`; null (and a test failure)
// when it cannot be created.
inline std::unique_ptr<ChatModel> StubChatClient(const std::string& base_url,
                                                 const std::string& model = "stub-model") {
  OpenAiChatOptions o;
  o.base_url = base_url;
  o.model = model;
  o.max_retries = 0;
  auto c = OpenAiChatClient::Create(o, nullptr);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(c).value() : nullptr;
}

}  // namespace flowrag::testing

#endif  // FLOWRAG_TESTS_STUB_CHAT_CLIENT_H_
