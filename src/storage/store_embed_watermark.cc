// The embed watermark (store.h, Store::CurrentEmbedWatermark): what lets the embed
// phase find the passages without a vector in O(passages added) instead of
// a join of every passage against the embedding table (0.8 s warm, 7-8 s
// cold at 10^5 passages).
#include <algorithm>
#include <charconv>
#include <string>

#include "storage/meta_value.h"
#include "storage/store.h"

namespace flowrag {
namespace {

constexpr char kWatermarkKey[] = "embed_watermark";

// "<titles generation> <through> <model>"; nullopt when it does not parse.
std::optional<EmbedWatermark> ParseWatermark(std::string_view text) {
  EmbedWatermark w;
  const char* p = text.data();
  const char* end = p + text.size();
  for (int64_t* field : {&w.titles_generation, &w.through}) {
    const auto [next, ec] = std::from_chars(p, end, *field);
    if (ec != std::errc() || next == end || *next != ' ' || *field < 0) return std::nullopt;
    p = next + 1;
  }
  w.model.assign(p, end);
  if (w.model.empty()) return std::nullopt;
  return w;
}

Result<std::optional<std::string>> MetaText(SqlConnection& conn, std::string_view key) {
  FLOWRAG_ASSIGN_OR_RETURN(Statement s, conn.Prepare("SELECT value FROM meta WHERE key = ?"));
  s.Bind(1, key);
  FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(std::string(s.Text(0)));
}

Status WriteWatermark(SqlConnection& conn, const EmbedWatermark& w) {
  FLOWRAG_ASSIGN_OR_RETURN(Statement s,
                           conn.Prepare("INSERT INTO meta(key, value) VALUES (?, ?) "
                                        "ON CONFLICT(key) DO UPDATE SET value = excluded.value"));
  const std::string value = std::to_string(w.titles_generation) + " " +
                            std::to_string(w.through) + " " + w.model;
  return s.Bind(1, kWatermarkKey).Bind(2, value).Run();
}

}  // namespace

Result<std::optional<EmbedWatermark>> Store::CurrentEmbedWatermark() {
  FLOWRAG_ASSIGN_OR_RETURN(std::optional<std::string> text, MetaText(*conn_, kWatermarkKey));
  if (!text) return std::optional<EmbedWatermark>();
  std::optional<EmbedWatermark> w = ParseWatermark(*text);
  if (!w) return std::optional<EmbedWatermark>();
  FLOWRAG_ASSIGN_OR_RETURN(std::optional<std::string> titles,
                           MetaText(*conn_, "titles_generation"));
  if (std::to_string(w->titles_generation) != titles.value_or("0")) {
    return std::optional<EmbedWatermark>();
  }
  return w;
}

Result<int64_t> Store::EmbeddedThrough(std::string_view model) {
  FLOWRAG_ASSIGN_OR_RETURN(std::optional<EmbedWatermark> w, CurrentEmbedWatermark());
  return w && w->model == model ? w->through : int64_t{0};
}

Status Store::CarryEmbedWatermark(const std::optional<EmbedWatermark>& held,
                                  std::optional<int64_t> max_id_before_inserts) {
  if (!held) return Status::Ok();
  EmbedWatermark next = *held;
  ++next.titles_generation;
  if (max_id_before_inserts) next.through = std::min(next.through, *max_id_before_inserts);
  return WriteWatermark(*conn_, next);
}

Status Store::ForgetEmbedWatermarkUnlessOf(std::string_view model) {
  FLOWRAG_ASSIGN_OR_RETURN(std::optional<std::string> text, MetaText(*conn_, kWatermarkKey));
  if (!text) return Status::Ok();
  const std::optional<EmbedWatermark> w = ParseWatermark(*text);
  if (w && w->model == model) return Status::Ok();
  FLOWRAG_ASSIGN_OR_RETURN(Statement s, conn_->Prepare("DELETE FROM meta WHERE key = ?"));
  return s.Bind(1, kWatermarkKey).Run();
}

Result<int64_t> Store::MaxPassageId() {
  FLOWRAG_ASSIGN_OR_RETURN(Statement s,
                           conn_->Prepare("SELECT coalesce(max(id), 0) FROM passages"));
  FLOWRAG_ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : int64_t{0};
}

Status Store::MarkAllPassagesEmbedded(std::string_view model) {
  std::lock_guard<std::mutex> lock(mu_);
  return InTransaction([&]() -> Status {
    EmbedWatermark w;
    FLOWRAG_ASSIGN_OR_RETURN(std::optional<std::string> titles,
                             MetaText(*conn_, "titles_generation"));
    if (titles) {
      FLOWRAG_ASSIGN_OR_RETURN(w.titles_generation,
                               ParseMetaInt(path_, "titles_generation", *titles, 0, INT64_MAX));
    }
    FLOWRAG_ASSIGN_OR_RETURN(w.through, MaxPassageId());
    w.model = std::string(model);
    return WriteWatermark(*conn_, w);
  });
}

}  // namespace flowrag
