#include "server/assets.h"

namespace flowrag::server {

std::optional<Asset> FindAsset(std::string_view name) {
  if (name == "cytoscape.min.js") return Asset{CytoscapeMinJs(), "text/javascript; charset=utf-8"};
  return std::nullopt;
}

}  // namespace flowrag::server
