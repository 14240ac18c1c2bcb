// A store's content by value, not by row ids, for tests that compare two
// stores built different ways (serial and concurrent runs, crashes and
// reruns, parallel workers): documents, passages, entities with their
// types, facts, mentions, SYNONYM edges and the names the offline extractor
// has linked everywhere, each named by content.
#ifndef FLOWRAG_TESTS_GRAPH_DUMP_H_
#define FLOWRAG_TESTS_GRAPH_DUMP_H_

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "storage/store.h"

namespace flowrag {

struct GraphDump {
  std::multiset<std::string> documents, passages, entities, facts, mentions, synonyms, linked;
  bool operator==(const GraphDump&) const = default;
};

// What one dump has that the other lacks, at most `limit` lines per part:
// the message of a failed comparison.
inline std::string DumpDifference(const GraphDump& got, const GraphDump& want, size_t limit = 8) {
  std::string out;
  const auto part = [&](const char* name, const std::multiset<std::string>& g,
                        const std::multiset<std::string>& w) {
    size_t extra = 0, missing = 0;
    std::string lines;
    for (const std::string& s : g) {
      if (g.count(s) > w.count(s) && extra++ < limit) lines += std::string("  + ") + s + "\n";
    }
    for (const std::string& s : w) {
      if (w.count(s) > g.count(s) && missing++ < limit) lines += std::string("  - ") + s + "\n";
    }
    if (extra + missing == 0) return;
    out += std::string(name) + ": " + std::to_string(extra) + " extra, " +
           std::to_string(missing) + " missing\n" + lines;
  };
  part("documents", got.documents, want.documents);
  part("passages", got.passages, want.passages);
  part("entities", got.entities, want.entities);
  part("facts", got.facts, want.facts);
  part("mentions", got.mentions, want.mentions);
  part("synonyms", got.synonyms, want.synonyms);
  part("linked names", got.linked, want.linked);
  return out;
}

inline GraphDump DumpGraph(Store& store) {
  GraphDump dump;
  std::map<int64_t, std::string> doc_ids, passage_keys, entity_names, relations;
  EXPECT_TRUE(store
                  .ForEachDocument([&](DocumentRow&& d) {
                    doc_ids[d.id] = d.external_id;
                    dump.documents.insert(d.external_id + "|" + d.title + "|" + d.text);
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_TRUE(
      store
          .ForEachPassage([&](const PassageRow& p) {
            const std::string key = doc_ids[p.document_id] + "#" + std::to_string(p.ordinal);
            passage_keys[p.id] = key;
            dump.passages.insert(key + "|" + std::to_string(p.begin) + "-" + std::to_string(p.end));
            return Status::Ok();
          })
          .ok());
  EXPECT_TRUE(store
                  .ForEachEntity([&](Store::EntityRow&& e) {
                    entity_names[e.id] = e.name + "|" + e.type;
                    dump.entities.insert(e.name + "|" + e.type);
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_TRUE(store
                  .ForEachRelation([&](int64_t id, std::string&& text) {
                    relations[id] = std::move(text);
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_TRUE(store
                  .ForEachFact([&](const Store::FactRow& f) {
                    dump.facts.insert(entity_names[f.subject_id] + " -" + relations[f.relation_id] +
                                      "-> " + entity_names[f.object_id]);
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_TRUE(store
                  .ForEachMention([&](const Store::MentionRow& m) {
                    dump.mentions.insert(passage_keys[m.passage_id] + "|" +
                                         entity_names[m.entity_id] + "|" + std::to_string(m.count) +
                                         "|" + std::to_string(m.defining) +
                                         std::to_string(m.title));
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_TRUE(store
                  .ForEachSynonym([&](const Store::SynonymRow& s) {
                    std::string a = entity_names[s.a], b = entity_names[s.b];
                    if (b < a) std::swap(a, b);
                    char similarity[32];
                    std::snprintf(similarity, sizeof(similarity), "%.4f", s.similarity);
                    dump.synonyms.insert(a + " ~ " + b + " " + similarity);
                    return Status::Ok();
                  })
                  .ok());
  auto linked = store.LinkedNames();
  EXPECT_TRUE(linked.ok());
  if (linked.ok()) dump.linked.insert(linked->begin(), linked->end());
  return dump;
}

inline GraphDump Dump(const std::string& location) {
  auto store = Store::Open(location);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? DumpGraph(**store) : GraphDump{};
}

}  // namespace flowrag

#endif  // FLOWRAG_TESTS_GRAPH_DUMP_H_
