// The schema contract: derivation, YAML form and validation (schema.h).
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/text.h"
#include "flowrag/schema.h"
#include "schema/field_profile.h"

namespace flowrag {
namespace {

std::string TypeName(const std::string& source) {
  const std::string base = source.substr(source.find_last_of('/') + 1);
  std::vector<std::string> tokens = FieldNameTokens(base);
  if (tokens.empty()) return "Record";
  tokens.back() = SingularToken(tokens.back());
  std::string out;
  for (std::string& t : tokens) {
    t[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(t[0])));
    out += t;
  }
  if (!std::isupper(static_cast<unsigned char>(out[0]))) out = "T" + out;
  return out;
}

std::string ToUpperAscii(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string RelationName(const std::string& field, const std::string& target_type) {
  static const std::set<std::string> kIdWords = {"id", "key", "code", "no",   "num",  "number",
                                                 "fk", "sku", "uuid", "guid", "isbn", "ticker"};
  std::string out;
  for (const std::string& t : FieldNameTokens(field)) {
    if (kIdWords.count(t)) continue;
    out += (out.empty() ? "" : "_") + ToUpperAscii(t);
  }
  return out.empty() ? "REFERENCES_" + ToUpperAscii(target_type) : out;
}

bool IsPascalCase(const std::string& s) {
  return !s.empty() && std::isupper(static_cast<unsigned char>(s[0])) &&
         std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)); });
}

bool IsUpperSnake(const std::string& s) {
  return !s.empty() && std::isupper(static_cast<unsigned char>(s[0])) &&
         std::all_of(s.begin(), s.end(), [](char c) {
           return std::isupper(static_cast<unsigned char>(c)) ||
                  std::isdigit(static_cast<unsigned char>(c)) || c == '_';
         });
}

// ---- YAML reading with positions -------------------------------------------

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  // `field`.`key`, or `key` at the top level.
  static std::string Path(const std::string& field, const char* key) {
    return field.empty() ? key : field + "." + key;
  }
  Status Error(const YAML::Node& at, const std::string& field, const std::string& what) const {
    const int line = at.IsDefined() ? at.Mark().line + 1 : 0;
    return Status::InvalidArgument(path_ + (line > 0 ? ":" + std::to_string(line) : "") + ": " +
                                   field + ": " + what);
  }
  Result<std::string> String(const YAML::Node& parent, const char* key, const std::string& field,
                             bool required = true) const {
    const YAML::Node n = parent[key];
    if (!n.IsDefined() || n.IsNull()) {
      if (!required) return std::string();
      return Error(parent, Path(field, key), "missing");
    }
    if (!n.IsScalar()) return Error(n, Path(field, key), "expected a string");
    return n.Scalar();
  }
  Result<double> Number(const YAML::Node& parent, const char* key, const std::string& field,
                        double fallback) const {
    const YAML::Node n = parent[key];
    if (!n.IsDefined() || n.IsNull()) return fallback;
    try {
      return n.as<double>();
    } catch (const YAML::Exception&) {
      return Error(n, Path(field, key), "expected a number, got \"" + n.Scalar() + "\"");
    }
  }
  Result<std::vector<std::string>> Strings(const YAML::Node& parent, const char* key,
                                           const std::string& field) const {
    std::vector<std::string> out;
    const YAML::Node n = parent[key];
    if (!n.IsDefined() || n.IsNull()) return out;
    if (!n.IsSequence()) return Error(n, Path(field, key), "expected a list of strings");
    for (const YAML::Node& e : n) {
      if (!e.IsScalar()) return Error(e, Path(field, key), "expected a list of strings");
      out.push_back(e.Scalar());
    }
    return out;
  }
  // A whole number in [0, 2^53] (a count or a version), `fallback` when absent.
  Result<int64_t> Count(const YAML::Node& parent, const char* key, const std::string& field,
                        int64_t fallback) const {
    FLOWRAG_ASSIGN_OR_RETURN(double v, Number(parent, key, field, static_cast<double>(fallback)));
    if (!(v >= 0 && v <= 9007199254740992.0) || v != std::floor(v)) {
      return Error(parent[key], Path(field, key), "expected a whole number (0 or more)");
    }
    return static_cast<int64_t>(v);
  }
  // A list of mappings (each item checked, so that reading an item's keys
  // cannot throw); an empty list when absent.
  Result<YAML::Node> List(const YAML::Node& parent, const char* key,
                          const std::string& field = "") const {
    const std::string at = Path(field, key);
    const YAML::Node n = parent[key];
    if (!n.IsDefined() || n.IsNull()) return YAML::Node(YAML::NodeType::Sequence);
    if (!n.IsSequence()) return Error(n, at, "expected a list");
    for (size_t i = 0; i < n.size(); ++i) {
      if (!n[i].IsMap())
        return Error(n[i], at + "[" + std::to_string(i) + "]", "expected a mapping");
    }
    return n;
  }

 private:
  std::string path_;
};

// The optional `routing: {preference: [tools], ood_gate: bool}`.
Status ReadRouting(const Reader& r, const YAML::Node& root, RoutingPolicy* routing) {
  const YAML::Node n = root["routing"];
  if (!n.IsDefined() || n.IsNull()) return Status::Ok();
  if (!n.IsMap()) return r.Error(n, "routing", "expected a mapping");
  for (const auto& kv : n) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
    if (key != "preference" && key != "ood_gate") {
      return r.Error(kv.first, "routing",
                     "unknown key \"" + key.substr(0, 40) + "\" (preference, ood_gate)");
    }
  }
  if (n["preference"].IsDefined() && !n["preference"].IsNull()) {
    FLOWRAG_ASSIGN_OR_RETURN(std::vector<std::string> tools, r.Strings(n, "preference", "routing"));
    if (tools.empty())
      return r.Error(n["preference"], "routing.preference", "expected at least one tool");
    for (size_t i = 0; i < tools.size(); ++i) {
      const std::string at = "routing.preference[" + std::to_string(i) + "]";
      if (std::find_if(std::begin(kRoutingTools), std::end(kRoutingTools),
                       [&](const char* t) { return tools[i] == t; }) == std::end(kRoutingTools)) {
        return r.Error(
            n["preference"][i], at,
            "\"" + tools[i].substr(0, 40) + "\" is not SchemaLookup, VectorRAG or GraphTraverse");
      }
      if (std::find(tools.begin(), tools.begin() + static_cast<ptrdiff_t>(i), tools[i]) !=
          tools.begin() + static_cast<ptrdiff_t>(i)) {
        return r.Error(n["preference"][i], at, "\"" + tools[i] + "\" is listed twice");
      }
    }
    routing->preference = std::move(tools);
  }
  const YAML::Node gate = n["ood_gate"];
  if (gate.IsDefined() && !gate.IsNull()) {
    if (!gate.IsScalar() || (gate.Scalar() != "true" && gate.Scalar() != "false")) {
      return r.Error(gate, "routing.ood_gate", "expected true or false");
    }
    routing->ood_gate = gate.Scalar() == "true";
  }
  return Status::Ok();
}

// The field catalog a contract declares: each source's field paths. The
// keys, links, types and relationships that follow may name only these.
class FieldCatalog {
 public:
  // False when the source is already there.
  bool AddSource(const std::string& source) { return fields_.emplace(source, Fields()).second; }
  // False when the source already has the field.
  bool AddField(const std::string& source, const std::string& field) {
    return fields_[source].insert(field).second;
  }
  bool HasSource(const std::string& source) const { return fields_.count(source) > 0; }
  bool Has(const std::string& source, const std::string& field) const {
    auto it = fields_.find(source);
    return it != fields_.end() && it->second.count(field) > 0;
  }

 private:
  using Fields = std::set<std::string>;
  std::map<std::string, Fields> fields_;
};

// An entity type's optional `extraction: {method, field}` (B.3.2).
Status ReadExtraction(const Reader& r, const YAML::Node& type, const std::string& at, EntityType* t,
                      const FieldCatalog& catalog) {
  const YAML::Node n = type["extraction"];
  if (!n.IsDefined() || n.IsNull()) return Status::Ok();
  const std::string field = at + ".extraction";
  if (!n.IsMap()) return r.Error(n, field, "expected a mapping {method, field}");
  FLOWRAG_ASSIGN_OR_RETURN(t->extraction, r.String(n, "method", field));
  FLOWRAG_ASSIGN_OR_RETURN(t->extraction_field, r.String(n, "field", field, false));
  static const std::set<std::string> kMethods = {"row_as_entity", "field", "nested_field", "llm"};
  if (!kMethods.count(t->extraction)) {
    return r.Error(
        n["method"], field + ".method",
        "\"" + t->extraction + "\" is not one of row_as_entity, field, nested_field, llm");
  }
  if (t->extraction != "field" && t->extraction != "nested_field") {
    t->extraction_field.clear();
    return Status::Ok();
  }
  if (t->extraction_field.empty()) {
    return r.Error(n, field + ".field",
                   "missing (" + t->extraction + " reads its instances from a field)");
  }
  if (!catalog.Has(t->source, t->extraction_field)) {
    return r.Error(n["field"], field + ".field",
                   "\"" + t->source + "." + t->extraction_field + "\" is not in the field catalog");
  }
  if (t->extraction == "nested_field" && t->extraction_field.find("[*]") == std::string::npos) {
    return r.Error(
        n["field"], field + ".field",
        "\"" + t->extraction_field + "\" is not a list path (nested_field needs \"x[*]\")");
  }
  return Status::Ok();
}

// The contract's optional `exclude: {files: [...], fields: [...]}` (the
// manifest it was induced under, A.3). Strict: an unknown key or an empty
// glob is an error, as a typo here would let excluded data through.
Status ReadExclusionRules(const Reader& r, const YAML::Node& root, ExclusionRules* out) {
  const YAML::Node n = root["exclude"];
  if (!n.IsDefined() || n.IsNull()) return Status::Ok();
  if (!n.IsMap()) return r.Error(n, "exclude", "expected a mapping {files: [...], fields: [...]}");
  for (const auto& entry : n) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "";
    if (key != "files" && key != "fields") {
      return r.Error(entry.first, "exclude." + key, "unknown key (expected files or fields)");
    }
  }
  for (const auto& [key, list] :
       {std::pair<const char*, std::vector<std::string>*>{"files", &out->files},
        {"fields", &out->fields}}) {
    const YAML::Node globs = n[key];
    if (!globs.IsDefined() || globs.IsNull()) continue;
    const std::string field = std::string("exclude.") + key;
    if (!globs.IsSequence()) return r.Error(globs, field, "expected a list of glob patterns");
    for (size_t i = 0; i < globs.size(); ++i) {
      if (!globs[i].IsScalar() || globs[i].Scalar().empty()) {
        return r.Error(globs[i], field + "[" + std::to_string(i) + "]",
                       "expected a non-empty glob pattern");
      }
      list->push_back(globs[i].Scalar());
    }
  }
  return Status::Ok();
}

}  // namespace

SchemaContract DeriveContract(const InducedSchema& schema) {
  SchemaContract c;
  c.structure = schema;
  std::map<std::string, std::string> type_of;  // source → type name
  std::set<std::string> used;
  std::map<std::string, std::string> format_of;  // type name → format of its first source
  for (const SourceInfo& src : schema.sources) {
    const std::string name = TypeName(src.name);
    // A.9: a source whose type another source of the same format already
    // declares joins that type (attributes unioned); otherwise the name is
    // made unique.
    auto same = std::find_if(c.entity_types.begin(), c.entity_types.end(),
                             [&](const EntityType& t) { return t.name == name; });
    const bool unify = same != c.entity_types.end() && format_of[name] == src.format;
    EntityType fresh;
    EntityType& t = unify ? *same : fresh;
    if (unify) {
      t.merged_sources.push_back(src.name);
    } else {
      t.name = name;
      for (int n = 2; used.count(t.name); ++n) t.name = name + std::to_string(n);
      used.insert(t.name);
      format_of[t.name] = src.format;
      t.source = src.name;
      for (const IdentityKey& k : schema.identity_keys) {
        if (k.source == src.name && k.primary) t.identity_key = k.fields;
      }
    }
    for (const FieldInfo& f : schema.fields) {
      if (f.source != src.name) continue;
      if (std::find(t.attributes.begin(), t.attributes.end(), f.path) != t.attributes.end())
        continue;
      t.attributes.push_back(f.path);
      if (f.type == "text" || (src.format == "text" && f.path == "text")) {
        t.text_fields.push_back(f.path);
      }
    }
    type_of[src.name] = t.name;
    if (!unify) c.entity_types.push_back(std::move(fresh));
  }
  for (const ForeignKey& fk : schema.foreign_keys) {
    RelationshipType r;
    r.from = type_of[fk.from_source];
    r.to = type_of[fk.to_source];
    r.name = RelationName(fk.from_field, r.to);
    r.from_field = fk.from_field;
    r.to_field = fk.to_field;
    r.cardinality = fk.cardinality;
    r.confidence = fk.confidence;
    c.relationships.push_back(std::move(r));
  }
  return c;
}

namespace {

// ---- YAML writing, one section at a time -----------------------------------

void EmitExclusionRules(const ExclusionRules& ex, YAML::Emitter* y) {
  if (ex.empty()) return;  // the manifest's rules, applied again by every ingestion
  *y << YAML::Key << "exclude" << YAML::Value << YAML::BeginMap << YAML::Key << "files"
     << YAML::Value << YAML::Flow << ex.files << YAML::Key << "fields" << YAML::Value << YAML::Flow
     << ex.fields << YAML::EndMap;
}

void EmitField(const FieldInfo& f, YAML::Emitter* y) {
  *y << YAML::Flow << YAML::BeginMap << YAML::Key << "path" << YAML::Value << f.path << YAML::Key
     << "id" << YAML::Value << f.id << YAML::Key << "type" << YAML::Value << f.type << YAML::Key
     << "nulls" << YAML::Value << f.nulls << YAML::Key << "distinct" << YAML::Value << f.distinct
     << YAML::Key << "uniqueness" << YAML::Value << f.uniqueness;
  if (!f.examples.empty()) *y << YAML::Key << "examples" << YAML::Value << YAML::Flow << f.examples;
  *y << YAML::EndMap;
}

// `sources`, each with the fields of the catalog that are its own.
void EmitSources(const InducedSchema& structure, YAML::Emitter* y) {
  *y << YAML::Key << "sources" << YAML::Value << YAML::BeginSeq;
  for (const SourceInfo& s : structure.sources) {
    *y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << s.name << YAML::Key << "path"
       << YAML::Value << s.path << YAML::Key << "format" << YAML::Value << s.format << YAML::Key
       << "records" << YAML::Value << s.records;
    if (s.corpus_files > 0) *y << YAML::Key << "corpus_files" << YAML::Value << s.corpus_files;
    *y << YAML::Key << "fields" << YAML::Value << YAML::BeginSeq;
    for (const FieldInfo& f : structure.fields) {
      if (f.source == s.name) EmitField(f, y);
    }
    *y << YAML::EndSeq << YAML::EndMap;
  }
  *y << YAML::EndSeq;
}

// identity_keys, foreign_keys and (when there is one) hierarchy.
void EmitKeysAndLinks(const InducedSchema& structure, YAML::Emitter* y) {
  *y << YAML::Key << "identity_keys" << YAML::Value << YAML::BeginSeq;
  for (const IdentityKey& k : structure.identity_keys) {
    *y << YAML::Flow << YAML::BeginMap << YAML::Key << "source" << YAML::Value << k.source
       << YAML::Key << "fields" << YAML::Value << YAML::Flow << k.fields << YAML::Key
       << "uniqueness" << YAML::Value << k.uniqueness << YAML::Key << "confidence" << YAML::Value
       << k.confidence << YAML::Key << "primary" << YAML::Value << k.primary << YAML::EndMap;
  }
  *y << YAML::EndSeq;
  *y << YAML::Key << "foreign_keys" << YAML::Value << YAML::BeginSeq;
  for (const ForeignKey& f : structure.foreign_keys) {
    *y << YAML::Flow << YAML::BeginMap << YAML::Key << "from_source" << YAML::Value << f.from_source
       << YAML::Key << "from_field" << YAML::Value << f.from_field << YAML::Key << "to_source"
       << YAML::Value << f.to_source << YAML::Key << "to_field" << YAML::Value << f.to_field
       << YAML::Key << "overlap" << YAML::Value << f.overlap << YAML::Key << "confidence"
       << YAML::Value << f.confidence << YAML::Key << "cardinality" << YAML::Value << f.cardinality
       << YAML::EndMap;
  }
  *y << YAML::EndSeq;
  if (structure.hierarchy.empty()) return;
  *y << YAML::Key << "hierarchy" << YAML::Value << YAML::BeginSeq;
  for (const SourceParent& p : structure.hierarchy) {
    *y << YAML::Flow << YAML::BeginMap << YAML::Key << "parent" << YAML::Value << p.parent
       << YAML::Key << "child" << YAML::Value << p.child << YAML::Key << "via" << YAML::Value
       << p.via << YAML::Key << "ratio" << YAML::Value << p.ratio << YAML::EndMap;
  }
  *y << YAML::EndSeq;
}

void EmitEntityType(const EntityType& t, YAML::Emitter* y) {
  *y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << t.name << YAML::Key << "source"
     << YAML::Value << t.source;
  if (!t.merged_sources.empty()) {
    *y << YAML::Key << "merged_sources" << YAML::Value << YAML::Flow << t.merged_sources;
  }
  *y << YAML::Key << "identity_key" << YAML::Value << YAML::Flow << t.identity_key << YAML::Key
     << "attributes" << YAML::Value << YAML::Flow << t.attributes << YAML::Key << "text_fields"
     << YAML::Value << YAML::Flow << t.text_fields;
  if (!t.RowType()) {
    *y << YAML::Key << "extraction" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
       << "method" << YAML::Value << t.extraction;
    if (!t.extraction_field.empty()) {
      *y << YAML::Key << "field" << YAML::Value << t.extraction_field;
    }
    *y << YAML::EndMap;
  }
  *y << YAML::EndMap;
}

void EmitRelationship(const RelationshipType& r, YAML::Emitter* y) {
  *y << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << r.name << YAML::Key
     << "from" << YAML::Value << r.from << YAML::Key << "to" << YAML::Value << r.to << YAML::Key
     << "from_field" << YAML::Value << r.from_field << YAML::Key << "to_field" << YAML::Value
     << r.to_field << YAML::Key << "cardinality" << YAML::Value << r.cardinality << YAML::Key
     << "confidence" << YAML::Value << r.confidence;
  if (!r.extraction.empty()) *y << YAML::Key << "extraction" << YAML::Value << r.extraction;
  *y << YAML::EndMap;
}

// extensions (the log) and routing.
void EmitExtensionsAndRouting(const SchemaContract& c, YAML::Emitter* y) {
  *y << YAML::Key << "extensions" << YAML::Value << YAML::BeginSeq;
  for (const ExtensionLogEntry& e : c.extensions) {
    *y << YAML::BeginMap << YAML::Key << "version" << YAML::Value << e.version << YAML::Key
       << "added" << YAML::Value << e.added;
    if (!e.left_out.empty()) *y << YAML::Key << "left_out" << YAML::Value << e.left_out;
    *y << YAML::EndMap;
  }
  *y << YAML::EndSeq;
  *y << YAML::Key << "routing" << YAML::Value << YAML::BeginMap << YAML::Key << "preference"
     << YAML::Value << YAML::Flow << c.routing.preference << YAML::Key << "ood_gate" << YAML::Value
     << c.routing.ood_gate << YAML::EndMap;
}

}  // namespace

std::string ToYaml(const SchemaContract& c) {
  YAML::Emitter y;
  y << YAML::BeginMap;
  y << YAML::Key << "flowrag_schema" << YAML::Value << 1;
  y << YAML::Key << "version" << YAML::Value << c.version;
  y << YAML::Key << "generated_by" << YAML::Value << c.generated_by;
  EmitExclusionRules(c.structure.exclusion_rules, &y);
  EmitSources(c.structure, &y);
  EmitKeysAndLinks(c.structure, &y);
  y << YAML::Key << "entity_types" << YAML::Value << YAML::BeginSeq;
  for (const EntityType& t : c.entity_types) EmitEntityType(t, &y);
  y << YAML::EndSeq;
  y << YAML::Key << "relationships" << YAML::Value << YAML::BeginSeq;
  for (const RelationshipType& r : c.relationships) EmitRelationship(r, &y);
  y << YAML::EndSeq;
  EmitExtensionsAndRouting(c, &y);
  y << YAML::EndMap;
  return std::string(y.c_str()) + "\n";
}

namespace {

// YAML is Unicode text; invalid UTF-8 would be kept byte for byte and not
// survive a ToYaml round trip (found by the fuzz target).
Status CheckUtf8(const std::string& text, const std::string& path) {
  size_t bad = 0;
  if (IsValidUtf8(text, &bad)) return Status::Ok();
  const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(bad), '\n');
  return Status::InvalidArgument(path + ":" + std::to_string(line) + ": invalid UTF-8 at byte " +
                                 std::to_string(bad) + " (a schema contract is UTF-8 text)");
}

// The document's top-level mapping.
Result<YAML::Node> LoadRootMapping(const std::string& text, const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    return Status::InvalidArgument(path + ":" + std::to_string(e.mark.line + 1) +
                                   ": invalid YAML: " + e.msg);
  }
  if (!root.IsMap()) {
    return Status::InvalidArgument(path + ": expected a mapping (a flowrag schema file)");
  }
  return root;
}

// flowrag_schema (the format), version and generated_by.
Status ReadHeader(const Reader& r, const YAML::Node& root, SchemaContract* c) {
  FLOWRAG_ASSIGN_OR_RETURN(double format, r.Number(root, "flowrag_schema", "", 0));
  if (format != 1) {
    return r.Error(root["flowrag_schema"], "flowrag_schema",
                   "expected 1 (the format this build reads)");
  }
  FLOWRAG_ASSIGN_OR_RETURN(int64_t version, r.Count(root, "version", "", 0));
  if (version < 1 || version > 1000000) {
    return r.Error(root["version"], "version", "expected a positive integer");
  }
  c->version = static_cast<int>(version);
  FLOWRAG_ASSIGN_OR_RETURN(c->generated_by, r.String(root, "generated_by", "", false));
  return Status::Ok();
}

// One field of a source's `fields` list; its path must be new to the source.
Result<FieldInfo> ReadField(const Reader& r, const YAML::Node& n, const std::string& at,
                            const std::string& source, FieldCatalog* catalog) {
  FieldInfo f;
  f.source = source;
  FLOWRAG_ASSIGN_OR_RETURN(f.path, r.String(n, "path", at));
  if (!catalog->AddField(source, f.path)) {
    return r.Error(n, at + ".path", "\"" + f.path + "\" appears twice");
  }
  FLOWRAG_ASSIGN_OR_RETURN(f.id, r.String(n, "id", at, false));
  FLOWRAG_ASSIGN_OR_RETURN(f.type, r.String(n, "type", at, false));
  FLOWRAG_ASSIGN_OR_RETURN(f.nulls, r.Count(n, "nulls", at, 0));
  FLOWRAG_ASSIGN_OR_RETURN(f.distinct, r.Count(n, "distinct", at, 0));
  FLOWRAG_ASSIGN_OR_RETURN(f.uniqueness, r.Number(n, "uniqueness", at, 0));
  FLOWRAG_ASSIGN_OR_RETURN(f.examples, r.Strings(n, "examples", at));
  return f;
}

// `sources`, each with its fields: the catalog everything after refers to.
Status ReadSources(const Reader& r, const YAML::Node& root, InducedSchema* structure,
                   FieldCatalog* catalog) {
  FLOWRAG_ASSIGN_OR_RETURN(YAML::Node sources, r.List(root, "sources"));
  for (size_t i = 0; i < sources.size(); ++i) {
    const std::string at = "sources[" + std::to_string(i) + "]";
    SourceInfo s;
    FLOWRAG_ASSIGN_OR_RETURN(s.name, r.String(sources[i], "name", at));
    if (!catalog->AddSource(s.name)) {
      return r.Error(sources[i], at + ".name", "\"" + s.name + "\" appears twice");
    }
    FLOWRAG_ASSIGN_OR_RETURN(s.path, r.String(sources[i], "path", at, false));
    FLOWRAG_ASSIGN_OR_RETURN(s.format, r.String(sources[i], "format", at, false));
    FLOWRAG_ASSIGN_OR_RETURN(s.records, r.Count(sources[i], "records", at, 0));
    FLOWRAG_ASSIGN_OR_RETURN(int64_t corpus_files, r.Count(sources[i], "corpus_files", at, 0));
    s.corpus_files = static_cast<size_t>(corpus_files);
    FLOWRAG_ASSIGN_OR_RETURN(YAML::Node fields, r.List(sources[i], "fields", at));
    for (size_t j = 0; j < fields.size(); ++j) {
      const std::string field_at = at + ".fields[" + std::to_string(j) + "]";
      FLOWRAG_ASSIGN_OR_RETURN(FieldInfo f, ReadField(r, fields[j], field_at, s.name, catalog));
      structure->fields.push_back(std::move(f));
    }
    structure->sources.push_back(std::move(s));
  }
  return Status::Ok();
}

// An error unless `source`.`field` is in the catalog.
Status CheckCatalogField(const Reader& r, const FieldCatalog& catalog, const YAML::Node& at_node,
                         const std::string& at, const std::string& source,
                         const std::string& field) {
  if (catalog.Has(source, field)) return Status::Ok();
  return r.Error(at_node, at, "\"" + source + "." + field + "\" is not in the field catalog");
}

Status ReadIdentityKeys(const Reader& r, const YAML::Node& root, const FieldCatalog& catalog,
                        std::vector<IdentityKey>* out) {
  FLOWRAG_ASSIGN_OR_RETURN(YAML::Node keys, r.List(root, "identity_keys"));
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::string at = "identity_keys[" + std::to_string(i) + "]";
    IdentityKey k;
    FLOWRAG_ASSIGN_OR_RETURN(k.source, r.String(keys[i], "source", at));
    FLOWRAG_ASSIGN_OR_RETURN(k.fields, r.Strings(keys[i], "fields", at));
    for (const std::string& f : k.fields) {
      FLOWRAG_RETURN_IF_ERROR(CheckCatalogField(r, catalog, keys[i], at + ".fields", k.source, f));
    }
    FLOWRAG_ASSIGN_OR_RETURN(k.uniqueness, r.Number(keys[i], "uniqueness", at, 0));
    FLOWRAG_ASSIGN_OR_RETURN(k.confidence, r.Number(keys[i], "confidence", at, 0));
    k.primary = keys[i]["primary"].IsDefined() && keys[i]["primary"].Scalar() == "true";
    out->push_back(std::move(k));
  }
  return Status::Ok();
}

Status ReadForeignKeys(const Reader& r, const YAML::Node& root, const FieldCatalog& catalog,
                       std::vector<ForeignKey>* out) {
  FLOWRAG_ASSIGN_OR_RETURN(YAML::Node fks, r.List(root, "foreign_keys"));
  for (size_t i = 0; i < fks.size(); ++i) {
    const std::string at = "foreign_keys[" + std::to_string(i) + "]";
    ForeignKey f;
    FLOWRAG_ASSIGN_OR_RETURN(f.from_source, r.String(fks[i], "from_source", at));
    FLOWRAG_ASSIGN_OR_RETURN(f.from_field, r.String(fks[i], "from_field", at));
    FLOWRAG_ASSIGN_OR_RETURN(f.to_source, r.String(fks[i], "to_source", at));
    FLOWRAG_ASSIGN_OR_RETURN(f.to_field, r.String(fks[i], "to_field", at));
    FLOWRAG_RETURN_IF_ERROR(
        CheckCatalogField(r, catalog, fks[i], at + ".from_field", f.from_source, f.from_field));
    FLOWRAG_RETURN_IF_ERROR(
        CheckCatalogField(r, catalog, fks[i], at + ".to_field", f.to_source, f.to_field));
    FLOWRAG_ASSIGN_OR_RETURN(f.overlap, r.Number(fks[i], "overlap", at, 0));
    FLOWRAG_ASSIGN_OR_RETURN(f.confidence, r.Number(fks[i], "confidence", at, 0));
    FLOWRAG_ASSIGN_OR_RETURN(f.cardinality, r.String(fks[i], "cardinality", at, false));
    out->push_back(std::move(f));
  }
  return Status::Ok();
}

Status ReadHierarchy(const Reader& r, const YAML::Node& root, const FieldCatalog& catalog,
                     std::vector<SourceParent>* out) {
  FLOWRAG_ASSIGN_OR_RETURN(YAML::Node hierarchy, r.List(root, "hierarchy"));
  for (size_t i = 0; i < hierarchy.size(); ++i) {
    const std::string at = "hierarchy[" + std::to_string(i) + "]";
    SourceParent p;
    FLOWRAG_ASSIGN_OR_RETURN(p.parent, r.String(hierarchy[i], "parent", at));
    FLOWRAG_ASSIGN_OR_RETURN(p.child, r.String(hierarchy[i], "child", at));
    FLOWRAG_ASSIGN_OR_RETURN(p.via, r.String(hierarchy[i], "via", at));
    FLOWRAG_ASSIGN_OR_RETURN(p.ratio, r.Number(hierarchy[i], "ratio", at, 0));
    if (!catalog.HasSource(p.parent)) {
      return r.Error(hierarchy[i], at + ".parent", "\"" + p.parent + "\" is not a source");
    }
    FLOWRAG_RETURN_IF_ERROR(
        CheckCatalogField(r, catalog, hierarchy[i], at + ".via", p.child, p.via));
    out->push_back(std::move(p));
  }
  return Status::Ok();
}

// The entity types read so far: for each, the sources its fields may come
// from (its own and the merged ones).
using TypeSources = std::map<std::string, std::vector<std::string>>;

// A type's `source`, which only an llm type may leave out: one a
// query-scoped extension (C.6) proposed, whose instances can only come
// from text. Then its `merged_sources`.
Status ReadTypeSources(const Reader& r, const YAML::Node& n, const std::string& at,
                       const FieldCatalog& catalog, EntityType* t) {
  FLOWRAG_ASSIGN_OR_RETURN(t->source, r.String(n, "source", at, false));
  if (t->source.empty()) {
    const YAML::Node extraction = n["extraction"];
    const bool llm = extraction.IsMap() && extraction["method"].IsScalar() &&
                     extraction["method"].Scalar() == "llm";
    if (!llm) return r.Error(n, at + ".source", "missing (only an llm type may have no source)");
  } else if (!catalog.HasSource(t->source)) {
    return r.Error(n["source"], at + ".source", "\"" + t->source + "\" is not a source");
  }
  FLOWRAG_ASSIGN_OR_RETURN(t->merged_sources, r.Strings(n, "merged_sources", at));
  for (const std::string& m : t->merged_sources) {
    if (!catalog.HasSource(m)) {
      return r.Error(n["merged_sources"], at + ".merged_sources", "\"" + m + "\" is not a source");
    }
  }
  return Status::Ok();
}

// A type's identity_key, attributes and text_fields. The key is the first
// source's; attributes and text fields may come from any merged source.
Status ReadTypeFields(const Reader& r, const YAML::Node& n, const std::string& at,
                      const FieldCatalog& catalog, EntityType* t) {
  FLOWRAG_ASSIGN_OR_RETURN(t->identity_key, r.Strings(n, "identity_key", at));
  FLOWRAG_ASSIGN_OR_RETURN(t->attributes, r.Strings(n, "attributes", at));
  FLOWRAG_ASSIGN_OR_RETURN(t->text_fields, r.Strings(n, "text_fields", at));
  for (const auto& [key, list] :
       {std::pair<const char*, const std::vector<std::string>*>{"identity_key", &t->identity_key},
        {"attributes", &t->attributes},
        {"text_fields", &t->text_fields}}) {
    for (size_t j = 0; j < list->size(); ++j) {
      const std::string& f = (*list)[j];
      bool found = catalog.Has(t->source, f);
      for (const std::string& m : t->merged_sources) {
        found = found || (list != &t->identity_key && catalog.Has(m, f));
      }
      if (!found) {
        return r.Error(n[key][j], at + "." + key,
                       "field \"" + f + "\" is not in the catalog of source \"" + t->source + "\"");
      }
    }
  }
  return Status::Ok();
}

// One entity type; its name must be PascalCase and new.
Result<EntityType> ReadEntityType(const Reader& r, const YAML::Node& n, const std::string& at,
                                  const FieldCatalog& catalog, const TypeSources& types) {
  EntityType t;
  FLOWRAG_ASSIGN_OR_RETURN(t.name, r.String(n, "name", at));
  if (!IsPascalCase(t.name)) {
    return r.Error(n["name"], at + ".name", "\"" + t.name + "\" is not PascalCase");
  }
  if (types.count(t.name)) {
    return r.Error(n["name"], at + ".name", "\"" + t.name + "\" appears twice");
  }
  FLOWRAG_RETURN_IF_ERROR(ReadTypeSources(r, n, at, catalog, &t));
  FLOWRAG_RETURN_IF_ERROR(ReadTypeFields(r, n, at, catalog, &t));
  FLOWRAG_RETURN_IF_ERROR(ReadExtraction(r, n, at, &t, catalog));
  return t;
}

Status ReadEntityTypes(const Reader& r, const YAML::Node& root, const FieldCatalog& catalog,
                       std::vector<EntityType>* out, TypeSources* type_sources) {
  FLOWRAG_ASSIGN_OR_RETURN(YAML::Node types, r.List(root, "entity_types"));
  for (size_t i = 0; i < types.size(); ++i) {
    const std::string at = "entity_types[" + std::to_string(i) + "]";
    FLOWRAG_ASSIGN_OR_RETURN(EntityType t, ReadEntityType(r, types[i], at, catalog, *type_sources));
    std::vector<std::string>& sources = (*type_sources)[t.name];
    sources = t.merged_sources;
    sources.push_back(t.source);
    out->push_back(std::move(t));
  }
  return Status::Ok();
}

// A relationship's from and to (entity types) and its optional from_field
// and to_field (fields of those types).
Status ReadRelationshipEnds(const Reader& r, const YAML::Node& n, const std::string& at,
                            const FieldCatalog& catalog, const TypeSources& types,
                            RelationshipType* rel) {
  FLOWRAG_ASSIGN_OR_RETURN(rel->from, r.String(n, "from", at));
  FLOWRAG_ASSIGN_OR_RETURN(rel->to, r.String(n, "to", at));
  for (const auto& [key, type] :
       {std::pair<const char*, const std::string*>{"from", &rel->from}, {"to", &rel->to}}) {
    if (!types.count(*type)) {
      return r.Error(n[key], at + "." + key, "\"" + *type + "\" is not an entity type");
    }
  }
  FLOWRAG_ASSIGN_OR_RETURN(rel->from_field, r.String(n, "from_field", at, false));
  FLOWRAG_ASSIGN_OR_RETURN(rel->to_field, r.String(n, "to_field", at, false));
  const auto type_has_field = [&](const std::string& type, const std::string& field) {
    const std::vector<std::string>& sources = types.at(type);
    return std::any_of(sources.begin(), sources.end(),
                       [&](const std::string& source) { return catalog.Has(source, field); });
  };
  if (!rel->from_field.empty() && !type_has_field(rel->from, rel->from_field)) {
    return r.Error(n["from_field"], at + ".from_field",
                   "\"" + rel->from_field + "\" is not a field of " + rel->from);
  }
  if (!rel->to_field.empty() && !type_has_field(rel->to, rel->to_field)) {
    return r.Error(n["to_field"], at + ".to_field",
                   "\"" + rel->to_field + "\" is not a field of " + rel->to);
  }
  return Status::Ok();
}

Status ReadRelationships(const Reader& r, const YAML::Node& root, const FieldCatalog& catalog,
                         const TypeSources& types, std::vector<RelationshipType>* out) {
  FLOWRAG_ASSIGN_OR_RETURN(YAML::Node rels, r.List(root, "relationships"));
  for (size_t i = 0; i < rels.size(); ++i) {
    const std::string at = "relationships[" + std::to_string(i) + "]";
    RelationshipType rel;
    FLOWRAG_ASSIGN_OR_RETURN(rel.name, r.String(rels[i], "name", at));
    if (!IsUpperSnake(rel.name)) {
      return r.Error(rels[i]["name"], at + ".name", "\"" + rel.name + "\" is not UPPER_SNAKE");
    }
    FLOWRAG_RETURN_IF_ERROR(ReadRelationshipEnds(r, rels[i], at, catalog, types, &rel));
    FLOWRAG_ASSIGN_OR_RETURN(rel.cardinality, r.String(rels[i], "cardinality", at, false));
    FLOWRAG_ASSIGN_OR_RETURN(rel.confidence, r.Number(rels[i], "confidence", at, 0));
    FLOWRAG_ASSIGN_OR_RETURN(rel.extraction, r.String(rels[i], "extraction", at, false));
    if (!rel.extraction.empty() && rel.extraction != "llm") {
      return r.Error(rels[i]["extraction"], at + ".extraction",
                     "\"" + rel.extraction +
                         "\" is not llm (leave it out for keys, link fields and co-occurrence)");
    }
    out->push_back(std::move(rel));
  }
  return Status::Ok();
}

// `extensions`: the log of monotonic extensions, each of a version between
// 2 and the contract's.
Status ReadExtensionLog(const Reader& r, const YAML::Node& root, int version,
                        std::vector<ExtensionLogEntry>* out) {
  FLOWRAG_ASSIGN_OR_RETURN(YAML::Node log, r.List(root, "extensions"));
  for (size_t i = 0; i < log.size(); ++i) {
    const std::string at = "extensions[" + std::to_string(i) + "]";
    ExtensionLogEntry e;
    FLOWRAG_ASSIGN_OR_RETURN(int64_t v, r.Count(log[i], "version", at, 0));
    if (v < 2 || v > version) {
      return r.Error(log[i], at + ".version", "expected a version between 2 and the contract's");
    }
    e.version = static_cast<int>(v);
    FLOWRAG_ASSIGN_OR_RETURN(e.added, r.Strings(log[i], "added", at));
    FLOWRAG_ASSIGN_OR_RETURN(e.left_out, r.Strings(log[i], "left_out", at));
    out->push_back(std::move(e));
  }
  return Status::Ok();
}

// The sections in file order; each names the first error it finds.
Result<SchemaContract> ParseContractUnguarded(const std::string& text, const std::string& path) {
  FLOWRAG_RETURN_IF_ERROR(CheckUtf8(text, path));
  FLOWRAG_ASSIGN_OR_RETURN(YAML::Node root, LoadRootMapping(text, path));
  const Reader r(path);
  SchemaContract c;
  FLOWRAG_RETURN_IF_ERROR(ReadHeader(r, root, &c));
  FLOWRAG_RETURN_IF_ERROR(ReadExclusionRules(r, root, &c.structure.exclusion_rules));
  FieldCatalog catalog;
  FLOWRAG_RETURN_IF_ERROR(ReadSources(r, root, &c.structure, &catalog));
  FLOWRAG_RETURN_IF_ERROR(ReadIdentityKeys(r, root, catalog, &c.structure.identity_keys));
  FLOWRAG_RETURN_IF_ERROR(ReadForeignKeys(r, root, catalog, &c.structure.foreign_keys));
  FLOWRAG_RETURN_IF_ERROR(ReadHierarchy(r, root, catalog, &c.structure.hierarchy));
  TypeSources types;
  FLOWRAG_RETURN_IF_ERROR(ReadEntityTypes(r, root, catalog, &c.entity_types, &types));
  FLOWRAG_RETURN_IF_ERROR(ReadRelationships(r, root, catalog, types, &c.relationships));
  FLOWRAG_RETURN_IF_ERROR(ReadExtensionLog(r, root, c.version, &c.extensions));
  FLOWRAG_RETURN_IF_ERROR(ReadRouting(r, root, &c.routing));
  return c;
}

}  // namespace

// Every node is checked before it is read, so no YAML exception should
// escape ParseContractUnguarded; one that does (a shape the checks missed)
// is a clear error naming the file, never an abort.
Result<SchemaContract> ParseContract(const std::string& text, const std::string& path) {
  try {
    return ParseContractUnguarded(text, path);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(path +
                                   (e.mark.is_null() ? "" : ":" + std::to_string(e.mark.line + 1)) +
                                   ": unexpected YAML structure: " + e.msg);
  }
}

Result<SchemaContract> LoadContract(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot open");
  std::ostringstream buf;
  buf << in.rdbuf();
  return ParseContract(buf.str(), path);
}

}  // namespace flowrag
