// nlohmann::json forms of the public result types (the layout is documented
// in include/flowrag/json.h), for code that embeds them in larger documents:
// the HTTP server, evaluation records.
#ifndef FLOWRAG_ENGINE_RESULT_JSON_H_
#define FLOWRAG_ENGINE_RESULT_JSON_H_

#include <nlohmann/json.hpp>

#include "flowrag/types.h"

namespace flowrag {

nlohmann::json RetrievalResultJson(const RetrievalResult& result);
nlohmann::json CitationJson(const Citation& citation);
nlohmann::json AnswerJson(const Answer& answer);
nlohmann::json StoreStatsJson(const StoreStats& stats);

}  // namespace flowrag

#endif  // FLOWRAG_ENGINE_RESULT_JSON_H_
