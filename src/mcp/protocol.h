// MCP protocol revisions this server speaks, and what each adds.
#ifndef FLOWRAG_MCP_PROTOCOL_H_
#define FLOWRAG_MCP_PROTOCOL_H_

#include <array>
#include <string_view>

namespace flowrag::mcp {

// Newest first. The TypeScript SDK 1.32 asks for 2025-11-25 and accepts the
// others.
inline constexpr std::array<std::string_view, 4> kProtocolVersions = {"2025-11-25", "2025-06-18",
                                                                      "2025-03-26", "2024-11-05"};
inline constexpr std::string_view kLatestProtocolVersion = kProtocolVersions[0];
// What a Streamable HTTP request without an MCP-Protocol-Version header speaks
// (the transport spec's fallback).
inline constexpr std::string_view kHttpDefaultProtocolVersion = "2025-03-26";

bool SupportedProtocolVersion(std::string_view version);

// initialize: the client's version when we speak it, else our latest (the
// client then decides whether it can go on).
std::string_view NegotiateProtocolVersion(std::string_view requested);

// 2025-06-18 added structured tool output (outputSchema, structuredContent),
// resource links in tool results and "title" on tools and resources.
inline bool HasStructuredOutput(std::string_view version) { return version >= "2025-06-18"; }

}  // namespace flowrag::mcp

#endif  // FLOWRAG_MCP_PROTOCOL_H_
