#include "sqldb/postgres_url.h"

#include <vector>

#include "common/text.h"

namespace flowrag {
namespace {

constexpr std::string_view kRedacted = "***";

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t end = s.find(sep, start);
    parts.push_back(s.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

// A URL cut where libpq cuts it.
struct UrlParts {
  std::string_view scheme;          // "postgresql://" or "postgres://"
  std::string_view user, password;  // the user part, up to the first '@' before any '/'
  bool has_userinfo = false, has_colon = false;
  std::string_view location;  // host, port and database: up to the query
  std::string_view query;     // after '?'
  bool has_query = false;
};

Result<UrlParts> SplitUrl(std::string_view url) {
  UrlParts parts;
  size_t scheme_len = 0;
  for (std::string_view scheme : {"postgresql://", "postgres://"}) {
    if (url.starts_with(scheme)) scheme_len = scheme.size();
  }
  if (scheme_len == 0) {
    return Status::InvalidArgument("not a PostgreSQL URL (expected postgresql://...)");
  }
  parts.scheme = url.substr(0, scheme_len);
  std::string_view rest = url.substr(scheme_len);
  const size_t at_or_slash = rest.find_first_of("@/");
  if (at_or_slash != std::string_view::npos && rest[at_or_slash] == '@') {
    parts.has_userinfo = true;
    const std::string_view userinfo = rest.substr(0, at_or_slash);
    rest = rest.substr(at_or_slash + 1);
    const size_t colon = userinfo.find(':');
    parts.user = userinfo.substr(0, colon);
    parts.has_colon = colon != std::string_view::npos;
    if (parts.has_colon) parts.password = userinfo.substr(colon + 1);
  }
  // An '@' left in the host part means an unencoded '@' in the password,
  // and '@' after a '/' an unencoded '/': libpq would echo the password's
  // tail as a host or port, so such a URL is refused without showing it.
  const size_t query_pos = rest.find('?');
  parts.location = rest.substr(0, query_pos);
  parts.has_query = query_pos != std::string_view::npos;
  if (parts.has_query) parts.query = rest.substr(query_pos + 1);
  const std::string_view host_part = parts.location.substr(0, parts.location.find('/'));
  if (host_part.find('@') != std::string_view::npos ||
      (!parts.has_userinfo && parts.location.find('@') != std::string_view::npos)) {
    return Status::InvalidArgument(
        "PostgreSQL URL (not shown): '@' or '/' in the user name or password must be "
        "percent-encoded (%40, %2F)");
  }
  return parts;
}

// "user[:password]@" (the password as `password`), or "" without a user part.
std::string UserInfo(const UrlParts& parts, std::string_view password) {
  if (!parts.has_userinfo) return "";
  std::string out(parts.user);
  if (parts.has_colon) out += ":" + std::string(password);
  return out + "@";
}

// The query's parameters: those passed to libpq (`kept`: not workspace),
// those shown (`redacted`: the password replaced), and what they set.
struct QueryParams {
  std::vector<std::string> kept, redacted;
  bool has_workspace = false, twice = false;
  bool has_timeout = false, has_encoding = false, has_app = false;
};

QueryParams ReadQuery(std::string_view query, PostgresUrl* out) {
  QueryParams q;
  for (std::string_view param : Split(query, '&')) {
    if (param.empty()) continue;
    const size_t eq = param.find('=');
    const std::string_view key = param.substr(0, eq);
    const std::string_view value =
        eq == std::string_view::npos ? std::string_view() : param.substr(eq + 1);
    if (key == "password") {
      if (!value.empty()) {
        out->password_raw = std::string(value);
        out->password_decoded = DecodePercent(value);
      }
      q.kept.emplace_back(param);
      q.redacted.push_back("password=" + std::string(kRedacted));
      continue;
    }
    q.redacted.emplace_back(param);
    if (key == "workspace") {
      q.twice |= q.has_workspace;
      q.has_workspace = true;
      out->workspace = std::string(value);
      continue;
    }
    q.has_timeout |= key == "connect_timeout";
    q.has_encoding |= key == "client_encoding";
    q.has_app |= key == "application_name" || key == "fallback_application_name";
    q.kept.emplace_back(param);
  }
  return q;
}

// `base` with `params` as its query string.
std::string WithQuery(std::string base, const std::vector<std::string>& params) {
  for (size_t i = 0; i < params.size(); ++i) base += (i == 0 ? "?" : "&") + params[i];
  return base;
}

}  // namespace

std::string PostgresApplicationName(std::string_view workspace) {
  // The server keeps 63 bytes (and says so on every connection otherwise);
  // workspace names are ASCII.
  return ("flowrag " + std::string(workspace)).substr(0, 63);
}

bool IsValidWorkspaceName(std::string_view name) {
  if (name.empty() || name.size() > 63 || name.starts_with("pg_")) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!letter && !(digit && i > 0)) return false;
  }
  return true;
}

Result<PostgresUrl> ParsePostgresUrl(std::string_view url) {
  FLOWRAG_ASSIGN_OR_RETURN(const UrlParts parts, SplitUrl(url));
  PostgresUrl out;
  if (!parts.password.empty()) {
    out.password_raw = std::string(parts.password);
    out.password_decoded = DecodePercent(parts.password);
  }
  QueryParams q;
  if (parts.has_query) q = ReadQuery(parts.query, &out);
  out.redacted = WithQuery(
      std::string(parts.scheme) + UserInfo(parts, kRedacted) + std::string(parts.location),
      q.redacted);
  if (q.twice)
    return Status::InvalidArgument(out.redacted + ": the workspace parameter is repeated");
  if (q.has_workspace && !IsValidWorkspaceName(out.workspace)) {
    return Status::InvalidArgument(
        out.redacted + ": bad workspace parameter \"" + RedactPassword(out, out.workspace) +
        "\" (expected 1 to 63 letters, digits and '_', not starting with a digit or pg_)");
  }
  // What flowrag sets unless the URL does.
  if (!q.has_timeout) q.kept.emplace_back("connect_timeout=10");
  if (!q.has_encoding) q.kept.emplace_back("client_encoding=UTF8");
  if (!q.has_app) {
    std::string app = PostgresApplicationName(out.workspace);
    app.replace(app.find(' '), 1, "%20");
    q.kept.emplace_back("fallback_application_name=" + app);
  }
  out.conninfo = WithQuery(
      std::string(parts.scheme) + UserInfo(parts, parts.password) + std::string(parts.location),
      q.kept);
  return out;
}

std::string RedactPassword(const PostgresUrl& url, std::string_view text) {
  std::string out(text);
  for (const std::string* secret : {&url.password_raw, &url.password_decoded}) {
    if (secret->empty()) continue;
    std::string next;
    size_t pos = 0;
    while (true) {
      const size_t hit = out.find(*secret, pos);
      if (hit == std::string::npos) break;
      next.append(out, pos, hit - pos);
      next += kRedacted;
      pos = hit + secret->size();
    }
    next.append(out, pos, std::string::npos);
    out = std::move(next);
  }
  return out;
}

}  // namespace flowrag
