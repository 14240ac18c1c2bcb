// The subgraph viewer: one self-contained HTML page (src/server/viewer.html,
// inline CSS and JavaScript, nothing fetched from elsewhere), embedded into
// the server at build time by src/server/embed_file.cmake (viewer.cmake).
#ifndef FLOWRAG_SERVER_VIEWER_PAGE_H_
#define FLOWRAG_SERVER_VIEWER_PAGE_H_

#include <string_view>

namespace flowrag::server {

// The page's bytes (UTF-8 HTML); static storage.
std::string_view ViewerHtml();

}  // namespace flowrag::server

#endif  // FLOWRAG_SERVER_VIEWER_PAGE_H_
