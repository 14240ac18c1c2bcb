#include "mcp/protocol.h"

namespace flowrag::mcp {

bool SupportedProtocolVersion(std::string_view version) {
  for (std::string_view v : kProtocolVersions) {
    if (v == version) return true;
  }
  return false;
}

std::string_view NegotiateProtocolVersion(std::string_view requested) {
  for (std::string_view v : kProtocolVersions) {
    if (v == requested) return v;
  }
  return kLatestProtocolVersion;
}

}  // namespace flowrag::mcp
