#include "retrieval/params.h"

#include <charconv>
#include <cmath>

#include "common/encoding.h"

namespace flowrag {
namespace {

// A value or key as error messages quote it: escaped, at most 60 bytes (a
// request may carry megabytes in one option).
std::string Quoted(std::string_view text) { return EscapeForMessage(text, 60); }

constexpr size_t kMaxStringOptionBytes = 64;

// The shortest text that reads back as `d`.
std::string NumberText(double d) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), d);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(d);
}

}  // namespace

bool ParamReader::Catalogued(std::string_view key, const char* type, std::string value) {
  if (catalog_ == nullptr) return false;
  catalog_->push_back({std::string(key), type, std::move(value)});
  return true;
}

const std::string* ParamReader::Find(std::string_view key) {
  if (params_ == nullptr) return nullptr;
  auto it = params_->find(std::string(key));
  if (it == params_->end()) return nullptr;
  used_.insert(it->first);
  return &it->second;
}

Status ParamReader::Read(std::string_view key, double* out) {
  if (Catalogued(key, "number", NumberText(*out))) return Status::Ok();
  const std::string* v = Find(key);
  if (v == nullptr) return Status::Ok();
  char* end = nullptr;
  double d = std::strtod(v->c_str(), &end);
  if (v->empty() || end != v->c_str() + v->size() || !std::isfinite(d)) {
    return Status::InvalidArgument("option " + std::string(key) + "=\"" + Quoted(*v) +
                                   "\": expected a number");
  }
  *out = d;
  return Status::Ok();
}

Status ParamReader::Read(std::string_view key, size_t* out) {
  if (Catalogued(key, "integer", std::to_string(*out))) return Status::Ok();
  const std::string* v = Find(key);
  if (v == nullptr) return Status::Ok();
  size_t n = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (v->empty() || ec != std::errc() || p != v->data() + v->size()) {
    return Status::InvalidArgument("option " + std::string(key) + "=\"" + Quoted(*v) +
                                   "\": expected a non-negative integer");
  }
  *out = n;
  return Status::Ok();
}

Status ParamReader::Read(std::string_view key, bool* out) {
  if (Catalogued(key, "bool", *out ? "true" : "false")) return Status::Ok();
  const std::string* v = Find(key);
  if (v == nullptr) return Status::Ok();
  if (*v == "1" || *v == "true" || *v == "on" || *v == "yes") {
    *out = true;
  } else if (*v == "0" || *v == "false" || *v == "off" || *v == "no") {
    *out = false;
  } else {
    return Status::InvalidArgument("option " + std::string(key) + "=\"" + Quoted(*v) +
                                   "\": expected true or false");
  }
  return Status::Ok();
}

Status ParamReader::Read(std::string_view key, std::string* out) {
  if (Catalogued(key, "string", *out)) return Status::Ok();
  const std::string* v = Find(key);
  // String options name a choice; a longer value is refused here, so that no
  // method's "expected ..." message quotes more than this of it.
  if (v != nullptr && v->size() > kMaxStringOptionBytes) {
    return Status::InvalidArgument("option " + std::string(key) + "=\"" + Quoted(*v) +
                                   "\": expected a name of at most " +
                                   std::to_string(kMaxStringOptionBytes) + " bytes");
  }
  if (v != nullptr) *out = *v;
  return Status::Ok();
}

Status ParamReader::CheckAllUsed(std::string_view method) const {
  if (params_ == nullptr) return Status::Ok();
  std::string unknown;
  size_t listed = 0, more = 0;
  for (const auto& [k, v] : *params_) {
    if (used_.count(k) != 0) continue;
    if (listed == 10) {  // the first ten, then a count
      ++more;
      continue;
    }
    unknown += (unknown.empty() ? "" : ", ") + Quoted(k);
    ++listed;
  }
  if (unknown.empty()) return Status::Ok();
  if (more > 0) unknown += " and " + std::to_string(more) + " more";
  return Status::InvalidArgument("unknown option(s) for method " + std::string(method) + ": " +
                                 unknown);
}

}  // namespace flowrag
