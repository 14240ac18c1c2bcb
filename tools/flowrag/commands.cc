#include "commands.h"

#include "config_cmd.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "flowrag/engine.h"
#include "flowrag/eval.h"
#include "flowrag/json.h"

namespace flowrag::cli {
namespace {

Result<std::vector<size_t>> ParseKs(const std::string& s) {
  std::vector<size_t> ks;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, ',')) {
    char* end = nullptr;
    unsigned long v = std::strtoul(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || v == 0) {
      return Status::InvalidArgument("--k \"" + s + "\": expected positive integers like 1,2,5,10");
    }
    ks.push_back(v);
  }
  if (ks.empty()) return Status::InvalidArgument("--k: expected at least one value");
  return ks;
}

std::string CacheDir() {
  if (const char* d = std::getenv("FLOWRAG_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::string(d) + "/flowrag";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/flowrag";
  return ".flowrag-cache";
}

void PrintPassagesText(const RetrievalResult& r) {
  for (size_t i = 0; i < r.passages.size(); ++i) {
    const ScoredPassage& p = r.passages[i];
    std::string text = p.text;
    if (text.size() > 240) text = text.substr(0, 237) + "...";
    for (char& c : text) {
      if (c == '\n' || c == '\f') c = ' ';
    }
    // "report.pdf#3 p. 12" for a passage of a paged document.
    const std::string pages = PagesLabel(p.page_first, p.page_last);
    std::printf("%2zu. [%s#%d%s%s] %.4f  %s\n    %s\n", i + 1, p.document_id.c_str(), p.ordinal,
                pages.empty() ? "" : " ", pages.c_str(), p.score, p.title.c_str(), text.c_str());
  }
  std::printf("(%s: %.3f ms, %zu candidates scored)\n", r.method.c_str(), r.diagnostics.time_ms,
              r.diagnostics.candidates_scored);
}

void PrintExplanation(const RetrievalResult& r) {
  if (!r.keywords.empty()) {
    std::printf("keywords:");
    for (const std::string& k : r.keywords) std::printf(" [%s]", k.c_str());
    std::printf("\n");
  }
  std::printf("seeds:");
  for (const GraphNode& n : r.nodes) {
    if (n.seed) std::printf(" %s (%.3g)", n.label.c_str(), n.score);
  }
  std::printf("\n");
  for (const std::string& c : r.context) std::printf("context: %s\n", c.c_str());
  std::printf("paths:\n");
  for (const auto& path : r.paths) {
    std::printf("  ");
    for (size_t i = 0; i < path.size(); ++i) std::printf("%s%s", i ? " -> " : "", path[i].c_str());
    std::printf("\n");
  }
  const RetrievalDiagnostics& d = r.diagnostics;
  std::printf(
      "diagnostics: %.3f ms, %zu iterations (pushes), residual %.3g, %zu nodes touched, %zu "
      "edge visits, %zu candidates scored",
      d.time_ms, d.iterations, d.residual, d.nodes_touched, d.edges_touched, d.candidates_scored);
  for (const auto& [k, v] : d.extra) std::printf(", %s %.4g", k.c_str(), v);
  std::printf("\n");
}

void PrintIndexReport(const IndexReport& r) {
  if (!r.extractor.empty() && r.extractor != "none") {
    std::fprintf(stderr,
                 "graph (%s): %zu passages extracted, %zu re-linked, %zu failed; %zu entities "
                 "created, %zu "
                 "deleted; %zu facts created, %zu triples rejected; %zu texts embedded, %zu "
                 "synonym edges; %.2f s extract, %.2f s embed+synonyms\n",
                 r.extractor.c_str(), r.passages_extracted, r.passages_relinked,
                 r.extraction_failures, r.entities_created, r.entities_deleted, r.facts_created,
                 r.triples_rejected, r.graph_texts_embedded, r.synonym_edges, r.extract_seconds,
                 r.graph_seconds);
  }
  if (r.estimated_llm_calls > 0) {
    std::fprintf(stderr,
                 "dry run: extraction would make %zu LLM calls, ~%zu prompt tokens and up to ~%zu "
                 "completion tokens\n",
                 r.estimated_llm_calls, r.estimated_prompt_tokens, r.estimated_completion_tokens);
  }
  for (const std::string& m : r.messages) std::fprintf(stderr, "  %s\n", m.c_str());
  std::fprintf(
      stderr,
      "indexed: %zu documents seen, %zu added, %zu replaced, %zu unchanged; %zu "
      "passages added, %zu embedded%s; %zu batches; %.2f s (ingest %.2f s, embed %.2f s)\n",
      r.documents_seen, r.documents_added, r.documents_replaced, r.documents_unchanged,
      r.passages_added, r.passages_embedded, r.embedder_refitted ? " (embedder refitted)" : "",
      r.batches_committed, r.total_seconds, r.ingest_seconds, r.embed_seconds);
}

}  // namespace

Result<std::map<std::string, std::string>> ParseSetPairs(const std::vector<std::string>& pairs) {
  std::map<std::string, std::string> out;
  for (const std::string& p : pairs) {
    size_t eq = p.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::InvalidArgument("--set \"" + p + "\": expected key=value");
    }
    out[p.substr(0, eq)] = p.substr(eq + 1);
  }
  return out;
}

Status RunIndex(IndexArgs args) {
  FLOWRAG_ASSIGN_OR_RETURN(args.index.chunking.strategy, ParseChunkStrategy(args.chunking));
  if (!args.quiet) args.index.progress = StderrProgress();
  FLOWRAG_ASSIGN_OR_RETURN(EngineOptions eo, ConfiguredEngineOptions(args.db, args.engine));
  FLOWRAG_ASSIGN_OR_RETURN(auto engine, Engine::Open(args.db, eo));
  FLOWRAG_ASSIGN_OR_RETURN(IndexReport report, engine->Index(args.sources, args.index));
  if (!args.quiet) PrintIndexReport(report);
  return Status::Ok();
}

Result<std::unique_ptr<Engine>> OpenExistingStore(const std::string& db) {
  if (!IsDatabaseUrl(db) && !StoreFileExists(db)) {
    return Status::NotFound(db + ": no such store (create it with `flowrag index`)");
  }
  EngineOptions base;
  base.read_only = true;
  FLOWRAG_ASSIGN_OR_RETURN(EngineOptions eo, ConfiguredEngineOptions(db, base));
  return Engine::Open(db, eo);
}

Status RunQuery(const QueryArgs& args) {
  FLOWRAG_ASSIGN_OR_RETURN(auto engine, OpenExistingStore(args.db));
  QueryOptions query = args.query;
  query.explain = args.explain;
  FLOWRAG_ASSIGN_OR_RETURN(RetrievalResult r, engine->Query(args.question, query));
  if (args.json) {
    std::printf("%s\n", QueryJson(args.question, r, 2).c_str());
  } else {
    PrintPassagesText(r);
    if (args.explain) PrintExplanation(r);
  }
  return Status::Ok();
}

Status RunEval(EvalArgs args) {
  FLOWRAG_ASSIGN_OR_RETURN(std::vector<size_t> ks, ParseKs(args.ks));
  if (args.format != "text" && args.format != "json") {
    return Status::InvalidArgument("--format \"" + args.format + "\": expected text or json");
  }
  FLOWRAG_ASSIGN_OR_RETURN(Benchmark bench, LoadBenchmark(args.bench));
  IndexOptions io;
  FLOWRAG_ASSIGN_OR_RETURN(io.chunking.strategy, ParseChunkStrategy(args.chunking));
  if (!args.quiet) io.progress = StderrProgress();
  if (args.db.empty()) {
    std::filesystem::create_directories(CacheDir());
    args.db = CacheDir() + "/" + bench.name + "-" + args.chunking + ".db";
  }
  FLOWRAG_ASSIGN_OR_RETURN(auto engine, Engine::Open(args.db, args.engine));
  // An empty store gets the corpus indexed with the defaults; a store that
  // already holds documents is evaluated as it is, so a graph built another
  // way (`index --extractor none` + `import-openie`) is not extended by a
  // second extractor.
  FLOWRAG_ASSIGN_OR_RETURN(StoreStats before, engine->Stats());
  if (before.documents == 0) {
    FLOWRAG_ASSIGN_OR_RETURN(IndexReport ir, engine->Index({args.bench}, io));
    if (!args.quiet) PrintIndexReport(ir);
  }

  std::ofstream records;
  if (!args.records.empty()) {
    records.open(args.records);
    if (!records) return Status::IoError(args.records + ": cannot open for writing");
  }
  for (const std::string& method : args.methods) {
    EvalOptions eo;
    eo.ks = ks;
    eo.query.method = method;
    eo.query.params = args.params;
    eo.limit = args.limit;
    if (!args.quiet) eo.progress = StderrProgress();
    eo.answers = args.answers;
    eo.answer = args.answer;
    FLOWRAG_ASSIGN_OR_RETURN(EvalReport rep, Evaluate(*engine, bench, eo));
    if (args.format == "json") {
      std::printf("%s\n", rep.ToJson().c_str());
    } else {
      std::printf("%-16s %-8s n=%zu ", rep.bench.c_str(), rep.method.c_str(), rep.questions);
      for (const auto& [k, v] : rep.recall) std::printf(" R@%zu=%.1f", k, v);
      if (rep.answers) {
        std::printf("  EM=%.1f F1=%.1f (%s)", rep.em, rep.f1, rep.pipeline.c_str());
      }
      std::printf("  p50=%.3f ms p99=%.3f ms\n", rep.latency_p50_ms, rep.latency_p99_ms);
    }
    for (const QuestionRecord& q : rep.records) {
      if (!records.is_open()) break;
      nlohmann::json j = {{"bench", rep.bench},
                          {"method", rep.method},
                          {"id", q.id},
                          {"retrieved", q.retrieved_ids},
                          {"latency_ms", q.latency_ms}};
      for (const auto& [k, v] : q.recall) j["recall"][std::to_string(k)] = v;
      const RetrievalDiagnostics& d = q.diagnostics;
      j["diagnostics"] = {{"time_ms", d.time_ms},
                          {"iterations", d.iterations},
                          {"nodes_touched", d.nodes_touched},
                          {"edges_touched", d.edges_touched}};
      for (const auto& [k, v] : d.extra) j["diagnostics"][k] = v;
      if (rep.answers) {
        j["question"] = q.question;
        j["answer"] = q.answer;
        j["gold"] = q.gold_answers;
        j["em"] = q.em;
        j["f1"] = q.f1;
        j["citations"] = nlohmann::json::array();
        for (const Citation& c : q.citations) {
          j["citations"].push_back({{"marker", c.marker},
                                    {"passage_id", c.passage_id},
                                    {"document_id", c.document_id},
                                    {"quote", c.quote}});
        }
        j["steps"] = nlohmann::json::array();
        for (const AnswerStep& st : q.steps) {
          j["steps"].push_back(
              {{"query", st.query}, {"answer", st.answer}, {"follow_up", st.follow_up}});
        }
        j["warnings"] = q.warnings;
      }
      records << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    }
  }
  return Status::Ok();
}

Status RunImportOpenIe(ImportArgs args) {
  if (!args.quiet) args.options.progress = StderrProgress();
  FLOWRAG_ASSIGN_OR_RETURN(auto engine, Engine::Open(args.db));
  FLOWRAG_ASSIGN_OR_RETURN(ImportReport r, engine->ImportOpenIe(args.file, args.options));
  std::fprintf(stderr,
               "imported %s: %zu records, %zu passages matched, %zu records without a passage, "
               "%zu passages without a record; triples %zu read, %zu kept, %zu malformed, %zu "
               "duplicate, %zu "
               "refused by the graph (subject = object); %zu "
               "entities and %zu facts created, %zu synonym edges; %.2f s\n",
               args.file.c_str(), r.records_read, r.passages_matched, r.records_unmatched,
               r.passages_without_record, r.triples_read, r.triples_kept, r.triples_malformed,
               r.duplicate_triples, r.triples_rejected, r.entities_created, r.facts_created,
               r.synonym_edges, r.seconds);
  for (const std::string& m : r.messages) std::fprintf(stderr, "  %s\n", m.c_str());
  return Status::Ok();
}

Status RunDelete(const std::string& db, const std::vector<std::string>& ids) {
  if (!IsDatabaseUrl(db) && !StoreFileExists(db)) {
    return Status::NotFound(db + ": no such store");
  }
  FLOWRAG_ASSIGN_OR_RETURN(auto engine, Engine::Open(db));
  for (const std::string& id : ids) {
    FLOWRAG_RETURN_IF_ERROR(engine->DeleteDocument(id));
    std::fprintf(stderr, "deleted %s\n", id.c_str());
  }
  return Status::Ok();
}

Status RunCompact(const std::string& db) {
  if (!IsDatabaseUrl(db) && !StoreFileExists(db)) {
    return Status::NotFound(db + ": no such store");
  }
  FLOWRAG_ASSIGN_OR_RETURN(EngineOptions eo, ConfiguredEngineOptions(db, EngineOptions{}));
  FLOWRAG_ASSIGN_OR_RETURN(auto engine, Engine::Open(db, eo));
  return engine->Compact();
}

// The segment directory's lines of `flowrag stats` (nothing for a store
// that keeps no segments).
void PrintSegmentStats(const SegmentStats& s) {
  if (s.directory.empty()) return;
  if (s.manifest == 0) {
    std::printf("segments         none yet in %s (the next write or `flowrag compact` writes one)\n",
                s.directory.c_str());
    return;
  }
  std::printf("segments         %zu in %s (manifest %llu, generation %lld), %.1f MiB; opened %s\n",
              s.files.size(), s.directory.c_str(), static_cast<unsigned long long>(s.manifest),
              static_cast<long long>(s.generation), s.live_bytes / 1048576.0,
              s.snapshot_source.empty() ? "-" : s.snapshot_source.c_str());
  for (const SegmentFileStats& f : s.files) {
    std::printf("  segment %-6llu %-10s %llu rows, %llu deleted (tombstones), %.1f MiB, level %u\n",
                static_cast<unsigned long long>(f.id), f.kind.c_str(),
                static_cast<unsigned long long>(f.rows),
                static_cast<unsigned long long>(f.deleted_rows), f.bytes / 1048576.0, f.level);
  }
  std::printf("  merges pending %llu; awaiting deletion %llu files, %.1f MiB\n",
              static_cast<unsigned long long>(s.merges_pending),
              static_cast<unsigned long long>(s.unreferenced_files),
              s.unreferenced_bytes / 1048576.0);
}

Status RunStats(const StatsArgs& args) {
  FLOWRAG_ASSIGN_OR_RETURN(auto engine, OpenExistingStore(args.db));
  FLOWRAG_ASSIGN_OR_RETURN(StoreStats s, engine->Stats());
  if (args.json) {
    nlohmann::json j = nlohmann::json::parse(ToJson(s));
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("store            %s (format %d)\n", s.path.c_str(), s.format_version);
    std::printf("documents        %lld\n", static_cast<long long>(s.documents));
    std::printf("passages         %lld\n", static_cast<long long>(s.passages));
    std::printf("embeddings       %lld (%lld models; %lld passages without a vector)\n",
                static_cast<long long>(s.embeddings), static_cast<long long>(s.embedding_models),
                static_cast<long long>(s.passages_missing_embeddings));
    std::printf("dense model      %s\n", s.dense_model.c_str());
    if (!s.passage_index.empty()) std::printf("passage index    %s\n", s.passage_index.c_str());
    if (!s.snapshot_parts_error.empty()) {
      std::printf("snapshot parts   not written: %s\n", s.snapshot_parts_error.c_str());
    }
    std::printf("index runs       %lld\n", static_cast<long long>(s.index_runs));
    std::printf("file size        %.1f MiB\n", s.file_bytes / 1048576.0);
    const GraphStats& g = s.graph;
    std::printf("graph nodes     ");
    for (const auto& [k, v] : g.nodes)
      std::printf(" %s=%lld", k.c_str(), static_cast<long long>(v));
    std::printf("\ngraph edges     ");
    for (const auto& [k, v] : g.edges)
      std::printf(" %s=%lld", k.c_str(), static_cast<long long>(v));
    std::printf(
        "\nentity degree    isolated %.1f%%, average %.2f, min %lld, median %lld, p90 %lld, "
        "p99 %lld, max %lld (RELATED_TO)\n",
        100.0 * g.isolated_ratio, g.average_degree, static_cast<long long>(g.degree_min),
        static_cast<long long>(g.degree_median), static_cast<long long>(g.degree_p90),
        static_cast<long long>(g.degree_p99), static_cast<long long>(g.degree_max));
    std::printf(
        "extraction       %lld passages done, %lld failed; LLM %lld calls, %lld prompt + "
        "%lld completion tokens\n",
        static_cast<long long>(g.extracted_passages), static_cast<long long>(g.failed_passages),
        static_cast<long long>(g.llm_calls), static_cast<long long>(g.llm_prompt_tokens),
        static_cast<long long>(g.llm_completion_tokens));
    std::printf("graph memory     %.1f MiB\n", g.memory_bytes / 1048576.0);
    PrintSegmentStats(s.segments);
    if (s.schema.present) {
      const SchemaStats& c = s.schema;
      std::printf("schema           v%d (%s): %lld SourceRecords, %lld DERIVED_FROM edges\n",
                  c.version, c.generated_by.c_str(), static_cast<long long>(c.source_records),
                  static_cast<long long>(c.derived_from));
      std::printf(
          "schema quality   utility %.0f%% (%lld/%lld types), relationship usage %.0f%% "
          "(%lld/%lld), cross-source %.0f%%, link validity %.1f%%, provenance %.1f%%, %s\n",
          100 * c.schema_utility, static_cast<long long>(c.entity_types_used),
          static_cast<long long>(c.entity_types), 100 * c.relationship_usage,
          static_cast<long long>(c.relationship_types_used),
          static_cast<long long>(c.relationship_types), 100 * c.cross_source_utility,
          100 * c.link_validity, 100 * c.provenance_completeness,
          c.qa_ready ? "QA-ready" : "not QA-ready (isolated >= 30% or degree < 2)");
    }
  }
  return Status::Ok();
}

Status RunMethods(const std::vector<std::string>& methods) {
  std::vector<std::string> names = methods;
  if (names.empty()) {
    for (const std::string& m : Engine::Methods()) {
      if (m != "auto") names.push_back(m);
    }
  }
  for (const std::string& method : names) {
    FLOWRAG_ASSIGN_OR_RETURN(std::vector<MethodOption> options, Engine::MethodOptions(method));
    std::printf("%s\n", method.c_str());
    for (const MethodOption& o : options) {
      std::printf("  --set %s=%s  (%s)\n", o.name.c_str(), o.default_value.c_str(),
                  o.type.c_str());
    }
  }
  return Status::Ok();
}

}  // namespace flowrag::cli
