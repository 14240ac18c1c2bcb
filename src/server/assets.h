// Files the viewer page loads from this server (/assets/{file}), embedded
// into the binary at build time (src/server/viewer.cmake): nothing is
// fetched from elsewhere at run time.
//
//   cytoscape.min.js   the graph library of the graph browser, from the npm
//                      package in js/node_modules/cytoscape (scripts/setup.sh)
#ifndef FLOWRAG_SERVER_ASSETS_H_
#define FLOWRAG_SERVER_ASSETS_H_

#include <optional>
#include <string_view>

namespace flowrag::server {

struct Asset {
  std::string_view bytes;  // static storage
  std::string_view content_type;
};

// The asset called `name`, or nullopt.
std::optional<Asset> FindAsset(std::string_view name);

// The bytes of js/node_modules/cytoscape/dist/cytoscape.min.js (generated).
std::string_view CytoscapeMinJs();

}  // namespace flowrag::server

#endif  // FLOWRAG_SERVER_ASSETS_H_
