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
  size_t scheme_len = 0;
  for (std::string_view scheme : {"postgresql://", "postgres://"}) {
    if (url.starts_with(scheme)) scheme_len = scheme.size();
  }
  if (scheme_len == 0) {
    return Status::InvalidArgument("not a PostgreSQL URL (expected postgresql://...)");
  }
  const std::string_view scheme = url.substr(0, scheme_len);
  std::string_view rest = url.substr(scheme_len);

  // The user part, as libpq finds it: up to the first '@' before any '/'.
  std::string_view user, password;
  bool has_userinfo = false, has_colon = false;
  const size_t at_or_slash = rest.find_first_of("@/");
  if (at_or_slash != std::string_view::npos && rest[at_or_slash] == '@') {
    has_userinfo = true;
    const std::string_view userinfo = rest.substr(0, at_or_slash);
    rest = rest.substr(at_or_slash + 1);
    const size_t colon = userinfo.find(':');
    user = userinfo.substr(0, colon);
    has_colon = colon != std::string_view::npos;
    if (has_colon) password = userinfo.substr(colon + 1);
  }
  // Host and database up to the query. An '@' left in the host part means
  // an unencoded '@' in the password, and '@' after a '/' an unencoded '/':
  // libpq would echo the password's tail as a host or port, so such a URL
  // is refused without showing it.
  const size_t query_pos = rest.find('?');
  const std::string_view location = rest.substr(0, query_pos);
  const std::string_view host_part = location.substr(0, location.find('/'));
  if (host_part.find('@') != std::string_view::npos ||
      (!has_userinfo && location.find('@') != std::string_view::npos)) {
    return Status::InvalidArgument(
        "PostgreSQL URL (not shown): '@' or '/' in the user name or password must be "
        "percent-encoded (%40, %2F)");
  }

  PostgresUrl out;
  if (!password.empty()) {
    out.password_raw = std::string(password);
    out.password_decoded = DecodePercent(password);
  }
  std::string userinfo_clear, userinfo_redacted;
  if (has_userinfo) {
    userinfo_clear = std::string(user);
    userinfo_redacted = std::string(user);
    if (has_colon) {
      userinfo_clear += ":" + std::string(password);
      userinfo_redacted += ":" + std::string(kRedacted);
    }
    userinfo_clear += "@";
    userinfo_redacted += "@";
  }

  std::vector<std::string> kept, redacted;
  bool has_workspace = false, twice = false;
  bool has_timeout = false, has_encoding = false, has_app = false;
  if (query_pos != std::string_view::npos) {
    for (std::string_view param : Split(rest.substr(query_pos + 1), '&')) {
      if (param.empty()) continue;
      const size_t eq = param.find('=');
      const std::string_view key = param.substr(0, eq);
      const std::string_view value =
          eq == std::string_view::npos ? std::string_view() : param.substr(eq + 1);
      if (key == "password") {
        if (!value.empty()) {
          out.password_raw = std::string(value);
          out.password_decoded = DecodePercent(value);
        }
        kept.emplace_back(param);
        redacted.push_back("password=" + std::string(kRedacted));
        continue;
      }
      redacted.emplace_back(param);
      if (key == "workspace") {
        twice |= has_workspace;
        has_workspace = true;
        out.workspace = std::string(value);
        continue;
      }
      has_timeout |= key == "connect_timeout";
      has_encoding |= key == "client_encoding";
      has_app |= key == "application_name" || key == "fallback_application_name";
      kept.emplace_back(param);
    }
  }

  out.redacted = std::string(scheme) + userinfo_redacted + std::string(location);
  for (size_t i = 0; i < redacted.size(); ++i) out.redacted += (i == 0 ? "?" : "&") + redacted[i];

  if (twice) return Status::InvalidArgument(out.redacted + ": the workspace parameter is repeated");
  if (has_workspace && !IsValidWorkspaceName(out.workspace)) {
    return Status::InvalidArgument(
        out.redacted + ": bad workspace parameter \"" + RedactPassword(out, out.workspace) +
        "\" (expected 1 to 63 letters, digits and '_', not starting with a digit or pg_)");
  }

  if (!has_timeout) kept.emplace_back("connect_timeout=10");
  if (!has_encoding) kept.emplace_back("client_encoding=UTF8");
  if (!has_app) {
    std::string app = PostgresApplicationName(out.workspace);
    app.replace(app.find(' '), 1, "%20");
    kept.emplace_back("fallback_application_name=" + app);
  }
  out.conninfo = std::string(scheme) + userinfo_clear + std::string(location);
  for (size_t i = 0; i < kept.size(); ++i) out.conninfo += (i == 0 ? "?" : "&") + kept[i];
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
