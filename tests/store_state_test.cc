// StoreState (storage/store_state.h) over an in-memory map of meta values:
// every key is written as the text earlier versions stored and read back;
// a value no write would have stored is Corruption naming the store and the
// key; a write of a value that could not be read back is refused before it
// reaches the store. The same over both backends: store_backends_test.cc
// (StoreStateKeepsEachKeysTextAndBumpsTheGeneration).
#include "storage/store_state.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace flowrag {
namespace {
namespace FLOWRAG_TEST_FILE {

// Meta values in a map; counts the writes that reach it.
class MemoryState final : public StoreState {
 public:
  const std::string& path() const override { return path_; }

  Result<std::optional<std::string>> GetEmbedderState(std::string_view name) override {
    auto it = states_.find(std::string(name));
    if (it == states_.end()) return std::optional<std::string>();
    return std::optional<std::string>(it->second.first);
  }
  Status PutEmbedderState(std::string_view name, std::string_view blob,
                          int64_t fitted_passages) override {
    states_[std::string(name)] = {std::string(blob), fitted_passages};
    return Status::Ok();
  }
  Result<int64_t> EmbedderStateFittedPassages(std::string_view name) override {
    auto it = states_.find(std::string(name));
    return it == states_.end() ? int64_t{-1} : it->second.second;
  }

  std::map<std::string, std::string> meta;
  int writes = 0;

 protected:
  Result<std::optional<std::string>> ReadMeta(std::string_view key) override {
    auto it = meta.find(std::string(key));
    if (it == meta.end()) return std::optional<std::string>();
    return std::optional<std::string>(it->second);
  }
  Status WriteMeta(std::string_view key, std::string_view value) override {
    ++writes;
    meta[std::string(key)] = std::string(value);
    return Status::Ok();
  }

 private:
  const std::string path_ = "/stores/s.db";
  std::map<std::string, std::pair<std::string, int64_t>> states_;
};

// One text key: its write, its read and a value to write.
struct TextKey {
  const char* key;
  std::function<Status(StoreState&, std::string_view)> write;
  std::function<Result<std::optional<std::string>>(StoreState&)> read;
  const char* value;
};

std::vector<TextKey> TextKeys() {
  return {
      {"embedder", &StoreState::SetEmbedderKind, &StoreState::EmbedderKind, "openai"},
      {"dense_model", &StoreState::SetDenseModel, &StoreState::DenseModel, "flowrag-hash-v1:abc"},
      {"language", &StoreState::SetLanguage, &StoreState::Language, "german"},
      {"tokenizer", &StoreState::SetTokenizer, &StoreState::Tokenizer, "tok2-german"},
      {"idf_tokenizer", &StoreState::SetIdfTokenizer, &StoreState::IdfTokenizer, "tok2-german"},
      {"extractor", &StoreState::SetExtractor, &StoreState::Extractor, "openie"},
      {"schema_contract", &StoreState::SetSchemaContractYaml, &StoreState::SchemaContractYaml,
       "version: 1\nentity_types: []\n"},
  };
}

TEST(StoreStateTest, EveryKeyIsStoredAsItsTextAndReadBack) {
  MemoryState state;
  for (const TextKey& k : TextKeys()) {
    auto absent = k.read(state);
    ASSERT_TRUE(absent.ok()) << k.key << ": " << absent.status().ToString();
    EXPECT_FALSE(absent->has_value()) << k.key;
    ASSERT_TRUE(k.write(state, k.value).ok()) << k.key;
    EXPECT_EQ(state.meta[k.key], k.value) << k.key;
    auto read = k.read(state);
    ASSERT_TRUE(read.ok()) << k.key << ": " << read.status().ToString();
    EXPECT_EQ(*read, std::optional<std::string>(k.value)) << k.key;
  }
  EXPECT_FALSE(state.HashDimension()->has_value());
  ASSERT_TRUE(state.SetHashDimension(256).ok());
  EXPECT_EQ(state.meta["hash_dimension"], "256");  // decimal text, as always
  EXPECT_EQ(*state.HashDimension(), std::optional<size_t>(256));
  EXPECT_EQ(state.meta.size(), TextKeys().size() + 1);
}

TEST(StoreStateTest, TheBoundsOfEachCheckedKeyAreAccepted) {
  MemoryState state;
  for (size_t d : {size_t{8}, size_t{65536}}) {
    ASSERT_TRUE(state.SetHashDimension(d).ok()) << d;
    EXPECT_EQ(*state.HashDimension(), std::optional<size_t>(d));
  }
  for (const char* kind : {kHashEmbedderName, kOpenAiEmbedderName, kCustomEmbedderName}) {
    ASSERT_TRUE(state.SetEmbedderKind(kind).ok()) << kind;
    EXPECT_EQ(*state.EmbedderKind(), std::optional<std::string>(kind));
  }
  for (const char* language : {"english-s", "none", "english", "porter"}) {
    ASSERT_TRUE(state.SetLanguage(language).ok()) << language;
    EXPECT_EQ(*state.Language(), std::optional<std::string>(language));
  }
}

// What an editor or a damaged page leaves: each read is Corruption naming
// the store and the key, with the value quoted.
TEST(StoreStateTest, AValueNoWriteWouldStoreIsCorruptionNamingTheStoreAndKey) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"hash_dimension", "abc"},
      {"hash_dimension", "1e99"},
      {"hash_dimension", "-5"},
      {"hash_dimension", "7"},
      {"hash_dimension", "65537"},
      {"hash_dimension", " 256"},
      {"hash_dimension", ""},
      {"hash_dimension", "99999999999999999999999"},
      {"embedder", "zzz"},
      {"embedder", ""},
      {"embedder", "Hash"},
      {"language", "klingon"},
      {"language", ""},
  };
  for (const auto& [key, value] : cases) {
    MemoryState state;
    state.meta[key] = value;
    Status st = key == "hash_dimension" ? state.HashDimension().status()
                : key == "embedder"     ? state.EmbedderKind().status()
                                        : state.Language().status();
    EXPECT_EQ(st.code(), StatusCode::kCorruption) << key << "=" << value << ": " << st.ToString();
    EXPECT_NE(st.message().find("/stores/s.db: meta." + key), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find("\"" + value.substr(0, 40) + "\""), std::string::npos)
        << st.ToString();
  }
}

TEST(StoreStateTest, AWriteItCouldNotReadBackIsRefusedBeforeTheStore) {
  MemoryState state;
  EXPECT_EQ(state.SetEmbedderKind("zzz").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(state.SetEmbedderKind("").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(state.SetHashDimension(7).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(state.SetHashDimension(65537).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(state.SetLanguage("klingon").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(state.writes, 0);
  EXPECT_TRUE(state.meta.empty());
}

TEST(StoreStateTest, IsEmbedderKindKnowsTheThreeNames) {
  EXPECT_TRUE(IsEmbedderKind("hash"));
  EXPECT_TRUE(IsEmbedderKind("openai"));
  EXPECT_TRUE(IsEmbedderKind("custom"));
  EXPECT_FALSE(IsEmbedderKind("hashed"));
  EXPECT_FALSE(IsEmbedderKind(""));
}

}  // namespace FLOWRAG_TEST_FILE
}  // namespace
}  // namespace flowrag
