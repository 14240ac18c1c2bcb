// Fuzz target: Spider tables.json (src/sql/spider_data.h LoadSpiderTables,
// then SchemaFromSpider, the value index of its samples and the JSON round
// trip of the schema graph) and the schema caches the store keeps
// (src/sql/schema_graph.h SchemaGraph::FromJson, src/sql/value_index.h
// ValueIndex::FromJson).
//
// Input: byte 0 picks the mode (bit 0 clear: the rest is a tables.json file;
// set: the rest is a cached schema graph JSON, also read as a value index).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "sql/schema_graph.h"
#include "sql/spider_data.h"
#include "sql/value_index.h"

namespace {

// What the engine does with a schema it has read: values, links, paths, JSON.
void UseGraph(flowrag::SchemaGraph& graph) {
  flowrag::AddImpliedJoins(&graph);
  graph.Finalize();
  if (graph.num_nodes() > 0) {
    (void)graph.ShortestPath(0, static_cast<uint32_t>(graph.num_nodes() - 1));
    for (uint32_t n = 0; n < graph.num_nodes() && n < 64; ++n) (void)graph.NodeNameText(n);
  }
  const flowrag::ValueIndex values = flowrag::ValueIndex::FromSamples(graph);
  (void)values.Find("how many singers are from France in 2014");
  auto back = flowrag::ValueIndex::FromJson(values.ToJson(), graph.columns.size());
  FUZZ_CHECK(back.ok(), "ValueIndex JSON round trip: " + back.status().ToString());
  const std::string json = graph.ToJson();
  auto again = flowrag::SchemaGraph::FromJson(json);
  FUZZ_CHECK(again.ok(), "SchemaGraph JSON round trip: " + again.status().ToString());
  FUZZ_CHECK(again->ToJson() == json, "SchemaGraph JSON round trip changed the graph");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1) == 0) {
    const std::string path = flowrag::fuzz::ScratchDir() + "/tables.json";
    flowrag::fuzz::WriteBytes(path, bytes);
    auto schemas = flowrag::LoadSpiderTables(path);
    if (!schemas.ok()) {
      FUZZ_CHECK_ERROR(schemas.status());
      return 0;
    }
    for (const flowrag::SpiderSchema& schema : *schemas) {
      flowrag::SchemaGraph graph = flowrag::SchemaFromSpider(schema);
      UseGraph(graph);
    }
    return 0;
  }
  auto graph = flowrag::SchemaGraph::FromJson(bytes);
  if (!graph.ok()) {
    FUZZ_CHECK_ERROR(graph.status());
  } else {
    UseGraph(*graph);
  }
  auto values = flowrag::ValueIndex::FromJson(bytes, graph.ok() ? graph->columns.size() : 8);
  if (!values.ok()) {
    FUZZ_CHECK_ERROR(values.status());
  } else {
    (void)values->Find("how many singers are from France in 2014");
  }
  return 0;
}
