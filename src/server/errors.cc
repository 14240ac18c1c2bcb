#include "server/errors.h"

#include <cctype>

namespace flowrag::server {

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition:
      return 409;
    case StatusCode::kDeadlineExceeded:
      return 504;
    case StatusCode::kUnavailable:
    case StatusCode::kCancelled:
      return 503;
    case StatusCode::kCorruption:
    case StatusCode::kIoError:
    case StatusCode::kInternal:
      return 500;
  }
  return 500;
}

std::string ErrorCodeFor(StatusCode code) {
  // "InvalidArgument" → "invalid_argument".
  std::string out;
  for (char c : StatusCodeName(code)) {
    if (std::isupper(static_cast<unsigned char>(c))) {
      if (!out.empty()) out += '_';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out;
}

ApiError ErrorFromStatus(const Status& status, std::string field) {
  return ApiError{HttpStatusFor(status.code()), ErrorCodeFor(status.code()), status.message(),
                  std::move(field)};
}

ApiError BadRequest(std::string message, std::string field) {
  return ApiError{400, "invalid_argument", std::move(message), std::move(field)};
}

nlohmann::json ErrorJson(const ApiError& error) {
  nlohmann::json e = {{"code", error.code}, {"message", error.message}};
  if (!error.field.empty()) e["field"] = error.field;
  return {{"error", e}};
}

Reply ErrorReply(const ApiError& error) {
  return Reply{error.http_status, ErrorJson(error), error.code, nullptr};
}

}  // namespace flowrag::server
