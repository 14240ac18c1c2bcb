#include "schema/schema_proposal.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <utility>

#include "common/text.h"

namespace flowrag {
namespace {

using Json = nlohmann::json;

bool IsAlnumAscii(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool IsUpperAscii(char c) { return c >= 'A' && c <= 'Z'; }
bool IsLowerOrDigit(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// ASCII alphanumeric runs, also split where a lower-case letter or digit is
// followed by an upper-case one ("placedBy" → {"placed", "By"}).
std::vector<std::string> NameTokens(std::string_view name) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : name) {
    if (!IsAlnumAscii(c)) {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
      continue;
    }
    if (IsUpperAscii(c) && !cur.empty() && IsLowerOrDigit(cur.back())) {
      out.push_back(std::move(cur));
      cur.clear();
    }
    cur += c;
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

const Json* FindKey(const Json& object, std::initializer_list<const char*> keys) {
  if (!object.is_object()) return nullptr;
  for (const char* k : keys) {
    auto it = object.find(k);
    if (it != object.end() && !it->is_null()) return &*it;
  }
  return nullptr;
}

std::string Text(const Json* v) {
  if (v == nullptr) return "";
  if (v->is_string()) return v->get<std::string>();
  if (v->is_number()) return v->dump();
  return "";
}

std::string Trim(std::string s) {
  const char* ws = " \t\r\n`\"'";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

std::string Quoted(std::string_view s) {
  std::string q(s.substr(0, std::min<size_t>(s.size(), 80)));
  return "\"" + q + (s.size() > 80 ? "...\"" : "\"");
}

// Field references in a value: a string, a list, or an object naming one.
void CollectRefs(const Json* v, std::vector<std::string>* out) {
  if (v == nullptr) return;
  if (v->is_string()) {
    if (std::string s = Trim(v->get<std::string>()); !s.empty()) out->push_back(std::move(s));
  } else if (v->is_array()) {
    for (const Json& e : *v) CollectRefs(&e, out);
  } else if (v->is_object()) {
    CollectRefs(FindKey(*v, {"field_id", "id", "field", "path", "field_ids"}), out);
  }
}

void AddUnique(std::vector<std::string>* list, const std::string& s) {
  if (!s.empty() && std::find(list->begin(), list->end(), s) == list->end()) list->push_back(s);
}

double Confidence(const Json* v) {
  if (v == nullptr || !v->is_number()) return 0.5;
  const double x = v->get<double>();
  return std::isfinite(x) ? std::clamp(x, 0.0, 1.0) : 0.5;
}

std::string Canon(std::string s) {
  s = ToLowerAscii(Trim(std::move(s)));
  for (char& c : s) {
    if (c == '-' || c == ' ') c = '_';
  }
  return s;
}

// Synonyms the model may write → the canonical word.
using Alias = std::pair<std::string_view, std::string_view>;

constexpr Alias kEntityMethods[] = {{"row_as_entity", "row_as_entity"},
                                    {"row", "row_as_entity"},
                                    {"record", "row_as_entity"},
                                    {"rows", "row_as_entity"},
                                    {"field", "field"},
                                    {"column", "field"},
                                    {"nested_field", "nested_field"},
                                    {"nested", "nested_field"},
                                    {"pattern", "pattern"},
                                    {"regex", "pattern"},
                                    {"llm", "llm"},
                                    {"semantic_extraction", "llm"},
                                    {"llm_extraction", "llm"}};

constexpr Alias kRelationshipMethods[] = {
    {"join_on_field", "join_on_field"},  {"join", "join_on_field"},
    {"foreign_key", "join_on_field"},    {"co_occurrence", "co_occurrence"},
    {"cooccurrence", "co_occurrence"},   {"within_text_span", "within_text_span"},
    {"text_span", "within_text_span"},   {"semantic_extraction", "semantic_extraction"},
    {"semantic", "semantic_extraction"}, {"llm", "semantic_extraction"}};

constexpr Alias kCardinalities[] = {
    {"1:1", "1:1"},         {"ONE_TO_ONE", "1:1"}, {"1:N", "1:N"}, {"1:M", "1:N"},
    {"ONE_TO_MANY", "1:N"}, {"N:1", "N:1"},        {"M:1", "N:1"}, {"MANY_TO_ONE", "N:1"},
    {"N:M", "N:M"},         {"M:N", "N:M"},        {"N:N", "N:M"}, {"MANY_TO_MANY", "N:M"}};

constexpr Alias kTemporalModes[] = {{"edge_properties", "edge_properties"},
                                    {"reified_nodes", "reified_nodes"},
                                    {"date_nodes", "date_nodes"},
                                    {"none", "none"}};

// The canonical word for `raw` (trimmed, lower-case, '-' and ' ' as '_';
// upper-case with `upper`), or "" when the table has none.
template <size_t N>
std::string Lookup(const std::string& raw, const Alias (&table)[N], bool upper = false) {
  std::string key = Canon(raw);
  if (upper) {
    for (char& c : key) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  for (const auto& [alias, word] : table) {
    if (key == alias) return std::string(word);
  }
  return "";
}

// Validation of one answer's records, reporting into `check`.
class Validator {
 public:
  Validator(const FieldCatalog& catalog, const std::map<std::string, std::string>& known,
            ProposalCheck* check)
      : catalog_(catalog), known_(known), check_(check) {}

  std::optional<ProposedEntityType> Entity(const Json& e, const std::string& where, int pass);
  std::optional<ProposedRelationshipType> Relationship(const Json& r, const std::string& where,
                                                       const SchemaProposal& proposal, int pass);
  TemporalConfig Temporal(const Json& t, const std::string& where);
  // The normalised name of a record (first of `keys`) into *name, and its
  // label for messages into *at; false (reported as dropped) when unusable.
  bool Name(const Json& record, const std::string& where, std::initializer_list<const char*> keys,
            std::string (*normalise)(std::string_view), std::string* name, std::string* at);
  // Resolves `ref` as a field of `source` into *path; counts and reports.
  bool FieldOf(const std::string& ref, const std::string& source, const std::string& where,
               std::string* path);
  // The source of entity type `name`: a proposed one, else a known one; "" if neither.
  std::string SourceOfType(const std::string& name, const SchemaProposal& proposal) const;
  void AddEntity(ProposedEntityType t, SchemaProposal* proposal);
  void AddRelationship(ProposedRelationshipType r, SchemaProposal* proposal);

  ProposalCheck* check() { return check_; }

 private:
  // The field references an entity record makes, as written.
  struct EntityRefs {
    std::vector<std::string> anchor, attributes, texts, extraction;
    std::string method;  // the extraction method as written
  };
  static EntityRefs ReadEntityRefs(const Json& e);
  // The entity's source: as named, else that of its first catalog field;
  // null (dropped, its references invalid) when there is neither.
  const SourceInfo* PlaceEntity(const Json& e, const EntityRefs& refs, const std::string& at);
  // The references resolved as fields of t->source; false (dropped) when
  // there are some and none is valid.
  bool ResolveEntityFields(const EntityRefs& refs, const std::string& at, ProposedEntityType* t);
  // The extraction method and the field it reads; false (dropped) when a
  // method that reads a field has none.
  bool SetExtraction(const std::string& method, const std::string& at, ProposedEntityType* t);

  void Invalid(const std::string& ref, const std::string& where) {
    ++check_->references;
    check_->invalid.push_back(where + ": " + Quoted(ref) + " is not a catalog field");
  }

  const FieldCatalog& catalog_;
  const std::map<std::string, std::string>& known_;
  ProposalCheck* check_;
};

bool Validator::FieldOf(const std::string& ref, const std::string& source, const std::string& where,
                        std::string* path) {
  const FieldInfo* f = catalog_.Resolve(ref, source);
  if (f == nullptr) {
    Invalid(ref, where);
    return false;
  }
  ++check_->references;
  ++check_->valid_references;
  if (f->source != source) {
    check_->adjusted.push_back(where + ": " + Quoted(ref) + " is a field of source \"" + f->source +
                               "\", not \"" + source + "\"; left out");
    return false;
  }
  *path = f->path;
  return true;
}

bool Validator::Name(const Json& record, const std::string& where,
                     std::initializer_list<const char*> keys,
                     std::string (*normalise)(std::string_view), std::string* name,
                     std::string* at) {
  if (!record.is_object()) {
    check_->dropped.push_back(where + ": not a JSON object");
    return false;
  }
  const std::string raw = Trim(Text(FindKey(record, keys)));
  *name = normalise(raw);
  *at = where + " (" + (name->empty() ? raw : *name) + ")";
  if (name->empty()) {
    check_->dropped.push_back(*at + ": no usable name");
    return false;
  }
  if (*name != raw)
    check_->adjusted.push_back(*at + ": name " + Quoted(raw) + " written as " + *name);
  return true;
}

Validator::EntityRefs Validator::ReadEntityRefs(const Json& e) {
  EntityRefs refs;
  CollectRefs(FindKey(e, {"anchor", "identity_key", "key", "primary_key", "anchor_field_ids"}),
              &refs.anchor);
  CollectRefs(FindKey(e, {"attributes", "fields", "attribute_field_ids"}), &refs.attributes);
  CollectRefs(FindKey(e, {"text_fields", "text_field_ids"}), &refs.texts);
  if (const Json* x = FindKey(e, {"extraction", "extraction_method", "method"})) {
    if (x->is_string()) refs.method = x->get<std::string>();
    if (x->is_object()) {
      refs.method = Text(FindKey(*x, {"method", "type", "strategy"}));
      CollectRefs(FindKey(*x, {"field_id", "field", "nested_field", "path", "field_ids"}),
                  &refs.extraction);
    }
  }
  CollectRefs(FindKey(e, {"extraction_field", "extraction_field_id"}), &refs.extraction);
  if (refs.extraction.size() > 1) refs.extraction.resize(1);
  return refs;
}

const SourceInfo* Validator::PlaceEntity(const Json& e, const EntityRefs& refs,
                                         const std::string& at) {
  const std::string named_source = Trim(Text(FindKey(e, {"source", "data_source", "source_name"})));
  const SourceInfo* src = named_source.empty() ? nullptr : catalog_.FindSource(named_source);
  const auto lists = {&refs.anchor, &refs.attributes, &refs.texts, &refs.extraction};
  if (src == nullptr) {
    for (const auto* list : lists) {
      for (const std::string& ref : *list) {
        if (src != nullptr) break;
        if (const FieldInfo* f = catalog_.Resolve(ref)) src = catalog_.FindSource(f->source);
      }
    }
    if (src != nullptr && !named_source.empty()) {
      check_->adjusted.push_back(at + ": " + Quoted(named_source) +
                                 " is not a source; placed in \"" + src->name +
                                 "\", the source of its fields");
    }
  }
  if (src == nullptr) {
    for (const auto* list : lists) {
      for (const std::string& ref : *list) Invalid(ref, at);
    }
    check_->dropped.push_back(at + ": " +
                              (named_source.empty() ? std::string("no source")
                                                    : Quoted(named_source) + " is not a source") +
                              " and no catalog field to place it");
  }
  return src;
}

bool Validator::ResolveEntityFields(const EntityRefs& refs, const std::string& at,
                                    ProposedEntityType* t) {
  size_t count = 0, valid = 0;
  auto resolve = [&](const std::vector<std::string>& list, const char* what,
                     std::vector<std::string>* into) {
    for (const std::string& ref : list) {
      ++count;
      std::string path;
      if (FieldOf(ref, t->source, at + "." + what, &path)) {
        ++valid;
        AddUnique(into, path);
      }
    }
  };
  std::vector<std::string> extraction_field;
  resolve(refs.anchor, "anchor", &t->identity_key);
  resolve(refs.attributes, "attributes", &t->attributes);
  resolve(refs.texts, "text_fields", &t->text_fields);
  resolve(refs.extraction, "extraction.field_id", &extraction_field);
  if (!extraction_field.empty()) t->extraction_field = extraction_field.front();
  if (count > 0 && valid == 0) {
    check_->dropped.push_back(at + ": every field reference is invalid");
    return false;
  }
  return true;
}

bool Validator::SetExtraction(const std::string& method, const std::string& at,
                              ProposedEntityType* t) {
  t->extraction = Lookup(method, kEntityMethods);
  if (t->extraction.empty()) {
    t->extraction = t->extraction_field.empty() ? "row_as_entity" : "field";
    if (!Trim(method).empty()) {
      check_->adjusted.push_back(at + ": extraction method " + Quoted(method) + " read as " +
                                 t->extraction);
    }
  }
  const bool needs_field =
      t->extraction == "field" || t->extraction == "nested_field" || t->extraction == "pattern";
  if (needs_field && t->extraction_field.empty()) {
    if (t->identity_key.empty()) {
      check_->dropped.push_back(at + ": extraction method " + t->extraction +
                                " without a field to read instances from");
      return false;
    }
    t->extraction_field = t->identity_key.front();
  }
  if (t->extraction != "llm") return true;
  if (t->text_fields.empty() && t->extraction_field.empty()) {
    t->text_fields = catalog_.TextFields(t->source);
  }
  if (t->extraction_field.empty() && !t->text_fields.empty()) {
    t->extraction_field = t->text_fields.front();
  }
  if (t->extraction_field.empty()) {
    check_->dropped.push_back(at + ": extraction method llm without a text field to read");
    return false;
  }
  AddUnique(&t->text_fields, t->extraction_field);
  return true;
}

std::optional<ProposedEntityType> Validator::Entity(const Json& e, const std::string& where,
                                                    int pass) {
  ProposedEntityType t;
  t.pass = pass;
  std::string at;
  if (!Name(e, where, {"name", "type", "entity", "entity_type"}, PascalCaseName, &t.name, &at)) {
    return std::nullopt;
  }
  if (t.name == "SourceRecord") {
    check_->dropped.push_back(at + ": provenance records are built in");
    return std::nullopt;
  }
  const EntityRefs refs = ReadEntityRefs(e);
  const SourceInfo* src = PlaceEntity(e, refs, at);
  if (src == nullptr) return std::nullopt;
  t.source = src->name;
  if (!ResolveEntityFields(refs, at, &t)) return std::nullopt;
  if (!SetExtraction(refs.method, at, &t)) return std::nullopt;
  // The attributes: the key, the extraction field, then the others.
  std::vector<std::string> all = t.identity_key;
  AddUnique(&all, t.extraction_field);
  for (const std::string& a : t.attributes) AddUnique(&all, a);
  t.attributes = std::move(all);
  t.description = Text(FindKey(e, {"description"}));
  t.confidence = Confidence(FindKey(e, {"confidence"}));
  return t;
}

std::string Validator::SourceOfType(const std::string& name, const SchemaProposal& proposal) const {
  for (const ProposedEntityType& t : proposal.entity_types) {
    if (t.name == name) return t.source;
  }
  auto it = known_.find(name);
  return it == known_.end() ? "" : it->second;
}

std::optional<ProposedRelationshipType> Validator::Relationship(const Json& r,
                                                                const std::string& where,
                                                                const SchemaProposal& proposal,
                                                                int pass) {
  ProposedRelationshipType rel;
  rel.pass = pass;
  std::string at;
  if (!Name(r, where, {"type", "name", "relationship", "relation"}, UpperSnakeName, &rel.name,
            &at)) {
    return std::nullopt;
  }
  const std::string raw_from =
      Trim(Text(FindKey(r, {"from", "source", "from_entity", "source_entity", "subject", "head"})));
  const std::string raw_to =
      Trim(Text(FindKey(r, {"to", "target", "to_entity", "target_entity", "object", "tail"})));
  rel.from = PascalCaseName(raw_from);
  rel.to = PascalCaseName(raw_to);
  const std::string from_source = SourceOfType(rel.from, proposal);
  const std::string to_source = SourceOfType(rel.to, proposal);
  for (const auto& [raw, source] : {std::pair{raw_from, from_source}, {raw_to, to_source}}) {
    if (source.empty()) {
      check_->dropped.push_back(at + ": endpoint " + Quoted(raw) + " is not a defined entity type");
      return std::nullopt;
    }
  }
  std::string from_ref =
      Trim(Text(FindKey(r, {"from_field_id", "from_field", "source_field_id", "source_field"})));
  std::string to_ref =
      Trim(Text(FindKey(r, {"to_field_id", "to_field", "target_field_id", "target_field"})));
  if (from_ref.empty() && to_ref.empty()) {
    std::vector<std::string> link;
    CollectRefs(FindKey(r, {"link_fields", "link_field_ids", "join_fields", "join_on"}), &link);
    if (!link.empty()) from_ref = link[0];
    if (link.size() > 1) to_ref = link[1];
  }
  // Resolved fields, (source, path), in the endpoint order given.
  size_t refs = 0, valid = 0;
  std::vector<const FieldInfo*> found(2, nullptr);
  for (int side = 0; side < 2; ++side) {
    const std::string& ref = side == 0 ? from_ref : to_ref;
    if (ref.empty()) continue;
    ++refs;
    const FieldInfo* f = catalog_.Resolve(ref, side == 0 ? from_source : to_source);
    if (f == nullptr) f = catalog_.Resolve(ref, side == 0 ? to_source : from_source);
    if (f == nullptr) {
      Invalid(ref, at + (side == 0 ? ".from_field" : ".to_field"));
      continue;
    }
    ++check_->references;
    ++check_->valid_references;
    ++valid;
    found[side] = f;
  }
  const bool swapped = from_source != to_source &&
                       (found[0] == nullptr || found[0]->source == to_source) &&
                       (found[1] == nullptr || found[1]->source == from_source) &&
                       (found[0] != nullptr || found[1] != nullptr);
  if (swapped) {
    std::swap(found[0], found[1]);
    check_->adjusted.push_back(at + ": link fields given the wrong way round; swapped");
  }
  for (int side = 0; side < 2; ++side) {
    const FieldInfo* f = found[side];
    if (f == nullptr) continue;
    const std::string& want = side == 0 ? from_source : to_source;
    if (f->source != want) {
      check_->adjusted.push_back(at + ": " + Quoted(f->source + "." + f->path) +
                                 " is not a field of " + (side == 0 ? rel.from : rel.to) +
                                 "; left out");
      continue;
    }
    (side == 0 ? rel.from_field : rel.to_field) = f->path;
  }
  if (refs > 0 && valid == 0) {
    check_->dropped.push_back(at + ": every field reference is invalid");
    return std::nullopt;
  }
  const std::string method = Text(FindKey(r, {"extraction", "extraction_strategy", "strategy"}));
  rel.extraction = Lookup(method, kRelationshipMethods);
  if (rel.extraction.empty()) {
    // Unstated: the deterministic strategies (B.5.2 type pattern without
    // fields); the LLM (B.5.3) only where the model asks for it.
    rel.extraction =
        rel.from_field.empty() && rel.to_field.empty() ? "co_occurrence" : "join_on_field";
  }
  rel.cardinality = Lookup(Text(FindKey(r, {"cardinality"})), kCardinalities, true);
  rel.description = Text(FindKey(r, {"evidence", "description"}));
  rel.confidence = Confidence(FindKey(r, {"confidence"}));
  return rel;
}

TemporalConfig Validator::Temporal(const Json& t, const std::string& where) {
  TemporalConfig out;
  if (!t.is_object()) return out;
  const Json* enabled = FindKey(t, {"enabled"});
  const std::string raw = Text(FindKey(t, {"mode", "strategy", "type"}));
  out.mode = Lookup(raw, kTemporalModes);
  if (out.mode.empty() || (enabled != nullptr && enabled->is_boolean() && !enabled->get<bool>())) {
    if (out.mode.empty() && !raw.empty()) {
      check_->adjusted.push_back(where + ": temporal mode " + Quoted(raw) + " read as none");
    }
    out.mode = "none";
  }
  std::vector<std::string> refs;
  CollectRefs(FindKey(t, {"field_ids", "fields", "field_id", "time_fields"}), &refs);
  for (const std::string& ref : refs) {
    const FieldInfo* f = catalog_.Resolve(ref);
    if (f == nullptr) {
      Invalid(ref, where);
      continue;
    }
    ++check_->references;
    ++check_->valid_references;
    AddUnique(&out.fields, f->source + "." + f->path);
  }
  return out;
}

void Validator::AddEntity(ProposedEntityType t, SchemaProposal* proposal) {
  for (ProposedEntityType& have : proposal->entity_types) {
    if (have.name != t.name) continue;
    if (have.source != t.source) {
      check_->dropped.push_back("entity " + t.name + " of source \"" + t.source +
                                "\": the name is taken by the entity of source \"" + have.source +
                                "\"");
      return;
    }
    for (const std::string& a : t.attributes) AddUnique(&have.attributes, a);
    for (const std::string& a : t.text_fields) AddUnique(&have.text_fields, a);
    if (have.identity_key.empty()) have.identity_key = t.identity_key;
    if (have.description.empty()) have.description = t.description;
    check_->adjusted.push_back("entity " + t.name + " (pass " + std::to_string(t.pass) +
                               "): merged into the entity of that name");
    return;
  }
  proposal->entity_types.push_back(std::move(t));
}

void Validator::AddRelationship(ProposedRelationshipType r, SchemaProposal* proposal) {
  for (ProposedRelationshipType& have : proposal->relationships) {
    if (have.from != r.from || have.to != r.to || have.name != r.name) continue;
    if (have.from_field.empty()) have.from_field = r.from_field;
    if (have.to_field.empty()) have.to_field = r.to_field;
    if (have.cardinality.empty()) have.cardinality = r.cardinality;
    check_->adjusted.push_back("relationship " + r.from + " " + r.name + " " + r.to +
                               ": duplicate merged");
    return;
  }
  proposal->relationships.push_back(std::move(r));
}

void ReadIssues(const Json& answer, SchemaProposal* proposal) {
  for (const char* key : {"issues", "notes"}) {
    const Json* v = FindKey(answer, {key});
    if (v == nullptr) continue;
    if (v->is_string() && !Trim(v->get<std::string>()).empty()) {
      proposal->issues.push_back(v->get<std::string>());
    } else if (v->is_array()) {
      for (const Json& e : *v) {
        if (e.is_string())
          proposal->issues.push_back(e.get<std::string>());
        else if (!e.is_null())
          proposal->issues.push_back(e.dump());
      }
    }
  }
}

std::string Describe(const Json& v) {
  std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  return s.size() > 120 ? s.substr(0, 120) + "..." : s;
}

// Renames `from` to `to` in relationship endpoints, then merges duplicates.
void RenameEndpoints(const std::string& from, const std::string& to, Validator* v,
                     SchemaProposal* p) {
  std::vector<ProposedRelationshipType> rels = std::move(p->relationships);
  p->relationships.clear();
  for (ProposedRelationshipType& r : rels) {
    if (r.from == from) r.from = to;
    if (r.to == from) r.to = to;
    v->AddRelationship(std::move(r), p);
  }
}

}  // namespace

std::string PascalCaseName(std::string_view name) {
  std::string out;
  for (std::string t : NameTokens(name)) {
    t[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(t[0])));
    out += t;
  }
  if (!out.empty() && !IsUpperAscii(out[0])) out = "T" + out;
  return out;
}

std::string UpperSnakeName(std::string_view name) {
  std::string out;
  for (const std::string& t : NameTokens(name)) {
    if (!out.empty()) out += '_';
    for (char c : t) out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  if (!out.empty() && !IsUpperAscii(out[0])) out = "R_" + out;
  return out;
}

Result<SchemaProposal> ReadDiscoveryAnswer(const Json& answer, const FieldCatalog& catalog,
                                           const std::map<std::string, std::string>& known_types,
                                           ProposalCheck* check) {
  const Json* entities = FindKey(answer, {"entities", "entity_types"});
  if (entities == nullptr || !entities->is_array()) {
    return Status::InvalidArgument("expected a JSON object with an \"entities\" list, got " +
                                   Describe(answer));
  }
  Validator v(catalog, known_types, check);
  SchemaProposal p;
  for (size_t i = 0; i < entities->size(); ++i) {
    if (auto t = v.Entity((*entities)[i], "entities[" + std::to_string(i) + "]", 1)) {
      v.AddEntity(std::move(*t), &p);
    }
  }
  if (const Json* rels = FindKey(answer, {"relationships", "relationship_types"});
      rels != nullptr && rels->is_array()) {
    for (size_t i = 0; i < rels->size(); ++i) {
      if (auto r = v.Relationship((*rels)[i], "relationships[" + std::to_string(i) + "]", p, 1)) {
        v.AddRelationship(std::move(*r), &p);
      }
    }
  }
  if (const Json* t = FindKey(answer, {"temporal"})) p.temporal = v.Temporal(*t, "temporal");
  ReadIssues(answer, &p);
  return p;
}

Status ApplyValidationAnswer(const Json& answer, const FieldCatalog& catalog,
                             const std::map<std::string, std::string>& known_types,
                             SchemaProposal* p, ProposalCheck* check) {
  const Json* renames = FindKey(answer, {"renamed_entities", "renames"});
  const Json* entities = FindKey(answer, {"added_entities", "new_entities", "entities"});
  const Json* attributes = FindKey(answer, {"added_attributes", "new_attributes"});
  const Json* rels = FindKey(answer, {"added_relationships", "new_relationships", "relationships"});
  const Json* temporal = FindKey(answer, {"temporal_changes", "temporal"});
  if (!answer.is_object() ||
      (renames == nullptr && entities == nullptr && attributes == nullptr && rels == nullptr &&
       temporal == nullptr && FindKey(answer, {"issues", "notes"}) == nullptr)) {
    return Status::InvalidArgument(
        "expected a JSON object with \"added_entities\", \"added_relationships\", "
        "\"added_attributes\", \"renamed_entities\", \"issues\" or \"notes\", got " +
        Describe(answer));
  }
  Validator v(catalog, known_types, check);
  auto find = [&](const std::string& name) -> ProposedEntityType* {
    for (ProposedEntityType& t : p->entity_types) {
      if (t.name == name) return &t;
    }
    return nullptr;
  };
  if (renames != nullptr && renames->is_array()) {
    for (const Json& r : *renames) {
      const std::string from = PascalCaseName(Text(FindKey(r, {"from", "old", "old_name"})));
      const std::string to = PascalCaseName(Text(FindKey(r, {"to", "new", "new_name"})));
      ProposedEntityType* t = find(from);
      if (t == nullptr || to.empty() || to == from) {
        check->adjusted.push_back("renamed_entities: " + Describe(r) + " ignored (" +
                                  (t == nullptr ? "no such entity" : "no new name") + ")");
        continue;
      }
      if (ProposedEntityType* into = find(to)) {
        if (into->source != t->source) {
          check->adjusted.push_back("renamed_entities: " + from + " -> " + to + " ignored (" + to +
                                    " reads another source)");
          continue;
        }
        ProposedEntityType merged = *t;
        merged.name = to;
        std::erase_if(p->entity_types, [&](const ProposedEntityType& e) { return e.name == from; });
        v.AddEntity(std::move(merged), p);
      } else {
        t->name = to;
        check->adjusted.push_back("renamed_entities: " + from + " renamed " + to);
      }
      RenameEndpoints(from, to, &v, p);
    }
  }
  if (entities != nullptr && entities->is_array()) {
    for (size_t i = 0; i < entities->size(); ++i) {
      if (auto t = v.Entity((*entities)[i], "added_entities[" + std::to_string(i) + "]", 2)) {
        v.AddEntity(std::move(*t), p);
      }
    }
  }
  if (attributes != nullptr && attributes->is_array()) {
    for (size_t i = 0; i < attributes->size(); ++i) {
      const Json& a = (*attributes)[i];
      const std::string at = "added_attributes[" + std::to_string(i) + "]";
      const std::string name = PascalCaseName(Text(FindKey(a, {"entity", "name", "entity_name"})));
      std::vector<std::string> refs;
      CollectRefs(FindKey(a, {"field_ids", "field_id", "attributes", "fields"}), &refs);
      ProposedEntityType* t = find(name);
      const std::string source = t != nullptr ? t->source : v.SourceOfType(name, *p);
      if (source.empty()) {
        check->dropped.push_back(at + ": " + Quoted(name) + " is not a defined entity type");
        continue;
      }
      for (const std::string& ref : refs) {
        std::string path;
        if (v.FieldOf(ref, source, at + " (" + name + ")", &path) && t != nullptr) {
          AddUnique(&t->attributes, path);
        }
      }
    }
  }
  if (rels != nullptr && rels->is_array()) {
    for (size_t i = 0; i < rels->size(); ++i) {
      if (auto r =
              v.Relationship((*rels)[i], "added_relationships[" + std::to_string(i) + "]", *p, 2)) {
        v.AddRelationship(std::move(*r), p);
      }
    }
  }
  if (temporal != nullptr && temporal->is_object()) {
    p->temporal = v.Temporal(*temporal, "temporal_changes");
  }
  ReadIssues(answer, p);
  return Status::Ok();
}

nlohmann::ordered_json ProposalToJson(const SchemaProposal& p, const FieldCatalog& catalog,
                                      const std::map<std::string, std::string>& known_types) {
  using Json = nlohmann::ordered_json;
  auto ids = [&](const std::string& source, const std::vector<std::string>& paths) {
    Json out = Json::array();
    for (const std::string& path : paths) out.push_back(catalog.IdOf(source, path));
    return out;
  };
  auto id_or_null = [&](const std::string& source, const std::string& path) -> Json {
    if (path.empty()) return nullptr;
    return catalog.IdOf(source, path);
  };
  Json entities = Json::array();
  std::map<std::string, std::string> source_of = known_types;
  for (const ProposedEntityType& t : p.entity_types) {
    source_of[t.name] = t.source;
    Json attributes = Json::array();
    for (const std::string& a : t.attributes) {
      attributes.push_back({{"field_id", catalog.IdOf(t.source, a)}, {"name", a}});
    }
    entities.push_back(
        {{"name", t.name},
         {"description", t.description},
         {"source", t.source},
         {"anchor", ids(t.source, t.identity_key)},
         {"attributes", std::move(attributes)},
         {"text_fields", ids(t.source, t.text_fields)},
         {"extraction",
          {{"method", t.extraction}, {"field_id", id_or_null(t.source, t.extraction_field)}}},
         {"confidence", t.confidence}});
  }
  Json rels = Json::array();
  for (const ProposedRelationshipType& r : p.relationships) {
    Json j = {{"type", r.name},
              {"from", r.from},
              {"to", r.to},
              {"cardinality", r.cardinality},
              {"extraction", r.extraction},
              {"confidence", r.confidence}};
    auto field = [&](const std::string& type, const std::string& path) -> Json {
      if (path.empty()) return nullptr;
      auto it = source_of.find(type);
      if (it != source_of.end()) return catalog.IdOf(it->second, path);
      return path;
    };
    j["from_field_id"] = field(r.from, r.from_field);
    j["to_field_id"] = field(r.to, r.to_field);
    rels.push_back(std::move(j));
  }
  Json temporal_ids = Json::array();
  for (const std::string& f : p.temporal.fields) {
    if (const FieldInfo* info = catalog.Resolve(f)) temporal_ids.push_back(info->id);
  }
  Json temporal = {{"mode", p.temporal.mode}, {"field_ids", std::move(temporal_ids)}};
  return {{"entities", std::move(entities)},
          {"relationships", std::move(rels)},
          {"temporal", std::move(temporal)}};
}

}  // namespace flowrag
