#include "indexing/openie_phase.h"

#include <unordered_map>

#include "common/progress.h"
#include "extract/openie_import.h"
#include "storage/graph_writer.h"

namespace flowrag {

Status ImportOpenIeTriples(const PhaseStores& stores, const std::string& path,
                           const ImportOpenIeOptions& options, ImportReport* report) {
  OpenIePassageMatcher matcher;
  std::unordered_map<int64_t, std::string> titles;
  FLOWRAG_RETURN_IF_ERROR(stores.graph.ForEachPassageContent([&](GraphSink::PendingPassage&& p) -> Status {
    matcher.AddPassage(p.passage_id, p.document_id, p.title, p.text);
    titles.emplace(p.passage_id, std::move(p.title));
    return Status::Ok();
  }));
  if (matcher.passage_count() == 0) {
    return Status::FailedPrecondition("no passages; index the corpus before importing OpenIE");
  }

  OpenIeReadOptions ro;
  ro.skip_bad_records = options.skip_bad_records;
  OpenIeReport oie;
  std::vector<PassageExtraction> batch;
  Progress meter("import-openie", "records", 0, options.progress);
  auto flush = [&]() -> Status {
    if (batch.empty()) return Status::Ok();
    GraphWriteReport gr;
    FLOWRAG_RETURN_IF_ERROR(stores.graph.WriteGraph(
        [&](GraphWriter& w) -> Status {
          for (const PassageExtraction& ex : batch) {
            FLOWRAG_RETURN_IF_ERROR(w.ApplyPassage(ex, "openie"));
          }
          return Status::Ok();
        },
        &gr));
    report->entities_created += gr.entities_created;
    report->facts_created += gr.facts_created;
    report->triples_rejected += gr.triples_rejected;
    batch.clear();
    return Status::Ok();
  };
  Status st = ReadOpenIe(
      path, ro,
      [&](OpenIeRecord&& record) -> Status {
        OpenIePassageMatcher::Match m = matcher.Find(record);
        meter.Advance(1);
        if (m.passage_ids.empty()) {
          ++report->records_unmatched;
          if (report->messages.size() < 20) {
            report->messages.push_back(
                path + ": record " + std::to_string(record.line_or_index) + ": no stored passage " +
                (record.key_is_text ? "with this text" : "with id \"" + record.passage_key + "\""));
          }
          return Status::Ok();
        }
        for (int64_t pid : m.passage_ids) {
          batch.push_back(ToExtraction(record, pid, &oie));
          AddTitleEntity(titles[pid], &batch.back());
          ++report->passages_matched;
        }
        if (batch.size() >= options.batch_size) return flush();
        return Status::Ok();
      },
      &oie);
  FLOWRAG_RETURN_IF_ERROR(st);
  FLOWRAG_RETURN_IF_ERROR(flush());
  meter.Finish();
  report->records_read = static_cast<size_t>(oie.records_read);
  report->triples_read = static_cast<size_t>(oie.triples_read);
  report->triples_kept = static_cast<size_t>(oie.triples_kept);
  report->triples_malformed = static_cast<size_t>(oie.triples_rejected);
  report->duplicate_triples = static_cast<size_t>(oie.duplicate_triples_removed);
  report->passages_without_record = matcher.UnmatchedPassages().size();
  for (const std::string& m : oie.messages) {
    if (report->messages.size() < 40) report->messages.push_back(m);
  }
  return Status::Ok();
}

}  // namespace flowrag
