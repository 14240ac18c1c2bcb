# Build rule of the viewer page, included by src/CMakeLists.txt after the
# server module: src/server/viewer.html → <build>/src/server/viewer_html.cc
# (regenerated whenever the page changes), compiled into flowrag_server.
set(flowrag_viewer_cc ${CMAKE_CURRENT_BINARY_DIR}/server/viewer_html.cc)
add_custom_command(
  OUTPUT ${flowrag_viewer_cc}
  COMMAND ${CMAKE_COMMAND} -DINPUT=${CMAKE_CURRENT_SOURCE_DIR}/server/viewer.html
          -DOUTPUT=${flowrag_viewer_cc} -DSYMBOL=ViewerHtml -DHEADER=server/viewer_page.h
          -P ${CMAKE_CURRENT_SOURCE_DIR}/server/embed_file.cmake
  DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/server/viewer.html
          ${CMAKE_CURRENT_SOURCE_DIR}/server/embed_file.cmake
  COMMENT "Embedding the viewer page src/server/viewer.html"
  VERBATIM)
target_sources(flowrag_server PRIVATE ${flowrag_viewer_cc})

# The graph browser's library: js/node_modules/cytoscape/dist/cytoscape.min.js
# (the npm package pinned by js/package-lock.json) → <build>/src/server/
# cytoscape_js.cc, served at /assets/cytoscape.min.js (server/assets.h).
set(flowrag_cytoscape_js ${PROJECT_SOURCE_DIR}/js/node_modules/cytoscape/dist/cytoscape.min.js)
if(NOT EXISTS ${flowrag_cytoscape_js})
  message(FATAL_ERROR "${flowrag_cytoscape_js} is missing: the viewer embeds it. "
                      "Run scripts/setup.sh (it runs `npm ci` in js/), then configure again.")
endif()
set(flowrag_cytoscape_cc ${CMAKE_CURRENT_BINARY_DIR}/server/cytoscape_js.cc)
add_custom_command(
  OUTPUT ${flowrag_cytoscape_cc}
  COMMAND ${CMAKE_COMMAND} -DINPUT=${flowrag_cytoscape_js} -DOUTPUT=${flowrag_cytoscape_cc}
          -DSYMBOL=CytoscapeMinJs -DHEADER=server/assets.h
          -P ${CMAKE_CURRENT_SOURCE_DIR}/server/embed_file.cmake
  DEPENDS ${flowrag_cytoscape_js} ${CMAKE_CURRENT_SOURCE_DIR}/server/embed_file.cmake
  COMMENT "Embedding js/node_modules/cytoscape/dist/cytoscape.min.js"
  VERBATIM)
target_sources(flowrag_server PRIVATE ${flowrag_cytoscape_cc})
