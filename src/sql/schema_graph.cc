#include "sql/schema_graph.h"

#include <cctype>
#include <cstdint>
#include <deque>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "common/encoding.h"
#include "common/json_errors.h"
#include "common/text.h"

namespace flowrag {

uint32_t SchemaGraph::AddTable(std::string table_name, std::string description) {
  tables.push_back({std::move(table_name), std::move(description), -1, {}});
  return static_cast<uint32_t>(tables.size() - 1);
}

uint32_t SchemaGraph::AddColumn(uint32_t table, std::string column_name, std::string type,
                                std::string description) {
  SchemaColumn c;
  c.table = table;
  c.name = std::move(column_name);
  c.type = std::move(type);
  c.description = std::move(description);
  columns.push_back(std::move(c));
  const auto index = static_cast<uint32_t>(columns.size() - 1);
  tables[table].columns.push_back(index);
  return index;
}

int64_t SchemaGraph::FindTable(std::string_view table) const {
  const std::string key = ToLowerAscii(table);
  for (size_t t = 0; t < tables.size(); ++t) {
    if (ToLowerAscii(tables[t].name) == key) return static_cast<int64_t>(t);
  }
  return -1;
}

int64_t SchemaGraph::FindColumn(std::string_view table, std::string_view column) const {
  const int64_t t = FindTable(table);
  if (t < 0) return -1;
  const std::string key = ToLowerAscii(column);
  for (uint32_t c : tables[t].columns) {
    if (ToLowerAscii(columns[c].name) == key) return c;
  }
  return -1;
}

uint32_t SchemaGraph::TableOf(uint32_t node) const {
  return Kind(node) == SchemaNodeKind::kTable ? node : columns[ColumnOf(node)].table;
}

std::string SchemaGraph::NodeName(uint32_t node) const {
  if (Kind(node) == SchemaNodeKind::kTable) return tables[node].name;
  const SchemaColumn& c = columns[ColumnOf(node)];
  return tables[c.table].name + "." + c.name;
}

std::string SchemaGraph::NodeNameText(uint32_t node) const {
  if (Kind(node) == SchemaNodeKind::kTable) return SplitIdentifier(tables[node].name);
  const SchemaColumn& c = columns[ColumnOf(node)];
  return SplitIdentifier(tables[c.table].name) + " " + SplitIdentifier(c.name);
}

std::string SchemaGraph::NodeText(uint32_t node) const {
  std::string text;
  if (Kind(node) == SchemaNodeKind::kTable) {
    const SchemaTable& t = tables[node];
    text = "table " + SplitIdentifier(t.name);
    if (!t.description.empty()) text += " | " + t.description;
    text += " | columns:";
    for (uint32_t c : t.columns) text += " " + SplitIdentifier(columns[c].name);
    return text;
  }
  const SchemaColumn& c = columns[ColumnOf(node)];
  text = "table " + SplitIdentifier(tables[c.table].name) + " | column " + SplitIdentifier(c.name);
  if (!c.type.empty()) text += " (" + ToLowerAscii(c.type) + ")";
  if (!c.description.empty()) text += " | " + c.description;
  if (!c.samples.empty()) {
    text += " | values:";
    for (size_t i = 0; i < c.samples.size(); ++i) text += (i ? ", " : " ") + c.samples[i];
  }
  return text;
}

void SchemaGraph::Finalize() {
  const size_t n = num_nodes();
  std::vector<std::vector<uint32_t>> adj(n);
  for (uint32_t c = 0; c < columns.size(); ++c) {
    adj[columns[c].table].push_back(ColumnNode(c));
    adj[ColumnNode(c)].push_back(columns[c].table);
  }
  for (const SchemaForeignKey& fk : foreign_keys) {
    if (fk.from == fk.to) continue;
    adj[ColumnNode(fk.from)].push_back(ColumnNode(fk.to));
    adj[ColumnNode(fk.to)].push_back(ColumnNode(fk.from));
  }
  offsets_.assign(n + 1, 0);
  adjacent_.clear();
  for (size_t u = 0; u < n; ++u) {
    adjacent_.insert(adjacent_.end(), adj[u].begin(), adj[u].end());
    offsets_[u + 1] = static_cast<uint32_t>(adjacent_.size());
  }
}

std::vector<uint32_t> SchemaGraph::ShortestPath(uint32_t a, uint32_t b) const {
  const size_t n = num_nodes();
  if (a >= n || b >= n) return {};
  if (a == b) return {a};
  std::vector<uint32_t> parent(n, UINT32_MAX);
  std::deque<uint32_t> queue{a};
  parent[a] = a;
  while (!queue.empty()) {
    const uint32_t u = queue.front();
    queue.pop_front();
    for (uint32_t i = offsets_[u]; i < offsets_[u + 1]; ++i) {
      const uint32_t v = adjacent_[i];
      if (parent[v] != UINT32_MAX) continue;
      parent[v] = u;
      if (v == b) {
        std::vector<uint32_t> path{b};
        for (uint32_t x = b; x != a;) path.push_back(x = parent[x]);
        return {path.rbegin(), path.rend()};
      }
      queue.push_back(v);
    }
  }
  return {};
}

std::string SplitIdentifier(std::string_view id) {
  std::string out;
  auto boundary = [&] {
    if (!out.empty() && out.back() != ' ') out += ' ';
  };
  for (size_t i = 0; i < id.size(); ++i) {
    const auto c = static_cast<unsigned char>(id[i]);
    if (!std::isalnum(c) && c < 0x80) {
      boundary();
      continue;
    }
    if (i > 0 && c < 0x80 && std::isalnum(static_cast<unsigned char>(id[i - 1]))) {
      const auto p = static_cast<unsigned char>(id[i - 1]);
      const bool next_lower = i + 1 < id.size() && std::islower(static_cast<unsigned char>(id[i + 1]));
      const bool camel = std::isupper(c) && std::islower(p);                  // salesQuota
      const bool acronym_end = std::isupper(c) && std::isupper(p) && next_lower;  // HTTPServer
      const bool digit_edge = (std::isdigit(c) != 0) != (std::isdigit(p) != 0);  // a2, 2a
      if (camel || acronym_end || digit_edge) boundary();
    }
    out += static_cast<char>(c < 0x80 ? std::tolower(c) : c);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string SchemaGraph::ToJson() const {
  nlohmann::json j;
  j["name"] = name;
  nlohmann::json ts = nlohmann::json::array();
  for (const SchemaTable& t : tables) {
    nlohmann::json cs = nlohmann::json::array();
    for (uint32_t ci : t.columns) {
      const SchemaColumn& c = columns[ci];
      cs.push_back({{"name", c.name}, {"type", c.type}, {"description", c.description},
                    {"pk", c.primary_key}, {"samples", c.samples}});
    }
    ts.push_back({{"name", t.name}, {"description", t.description}, {"rows", t.rows}, {"columns", cs}});
  }
  j["tables"] = std::move(ts);
  nlohmann::json fks = nlohmann::json::array();
  for (const SchemaForeignKey& fk : foreign_keys) {
    fks.push_back({NodeName(ColumnNode(fk.from)), NodeName(ColumnNode(fk.to)), fk.inferred});
  }
  j["foreign_keys"] = std::move(fks);
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<SchemaGraph> SchemaGraph::FromJson(std::string_view text) {
  SchemaGraph g;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    g.name = j.value("name", "");
    std::unordered_set<std::string> names;  // "t:<table>", "c:<table index>:<column>", lower case
    for (const auto& t : j.at("tables")) {
      // Names resolve case-insensitively (FindTable, FindColumn): two that
      // differ only in case would make the foreign keys below ambiguous.
      const std::string table_name = t.at("name").get<std::string>();
      if (!names.insert("t:" + ToLowerAscii(table_name)).second) {
        return Status::InvalidArgument("schema graph JSON: table \"" +
                                       EscapeForMessage(table_name, 60) +
                                       "\" appears twice (names are case-insensitive)");
      }
      const uint32_t ti = g.AddTable(table_name, t.value("description", ""));
      // get<int64_t>() of 7.5e27 is undefined behaviour: check the kind first.
      const auto rows = t.find("rows");
      if (rows != t.end() && !rows->is_null()) {
        if (!rows->is_number_integer() ||
            (rows->is_number_unsigned() && rows->get<uint64_t>() > uint64_t{INT64_MAX})) {
          return Status::InvalidArgument("schema graph JSON: tables[" + std::to_string(ti) +
                                         "].rows: expected an integer, got " +
                                         DescribeJsonType(*rows));
        }
        g.tables[ti].rows = rows->get<int64_t>();
      }
      for (const auto& c : t.at("columns")) {
        const std::string column_name = c.at("name").get<std::string>();
        if (!names.insert("c:" + std::to_string(ti) + ":" + ToLowerAscii(column_name)).second) {
          return Status::InvalidArgument("schema graph JSON: column \"" +
                                         EscapeForMessage(table_name + "." + column_name, 80) +
                                         "\" appears twice (names are case-insensitive)");
        }
        const uint32_t ci = g.AddColumn(ti, column_name, c.value("type", ""),
                                        c.value("description", ""));
        g.columns[ci].primary_key = c.value("pk", false);
        g.columns[ci].samples = c.value("samples", std::vector<std::string>{});
      }
    }
    for (const auto& fk : j.at("foreign_keys")) {
      int64_t ends[2];
      for (int k = 0; k < 2; ++k) {
        const std::string ref = fk.at(k).get<std::string>();
        ends[k] = -1;  // table names may contain dots: try every split
        for (size_t dot = ref.find('.'); dot != std::string::npos && ends[k] < 0; dot = ref.find('.', dot + 1)) {
          ends[k] = g.FindColumn(ref.substr(0, dot), ref.substr(dot + 1));
        }
        if (ends[k] < 0) {
          return Status::InvalidArgument("schema graph: foreign key end \"" +
                                         EscapeForMessage(ref, 80) + "\" names no column");
        }
      }
      g.foreign_keys.push_back({static_cast<uint32_t>(ends[0]), static_cast<uint32_t>(ends[1]),
                                fk.size() > 2 && fk.at(2).get<bool>()});
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument("schema graph JSON: " + CleanJsonError(e.what(), false));
  }
  g.Finalize();
  return g;
}

}  // namespace flowrag
