# Build rule of the viewer page, included by src/CMakeLists.txt after the
# server module: src/server/viewer.html → <build>/src/server/viewer_html.cc
# (regenerated whenever the page changes), compiled into flowrag_server.
set(flowrag_viewer_cc ${CMAKE_CURRENT_BINARY_DIR}/server/viewer_html.cc)
add_custom_command(
  OUTPUT ${flowrag_viewer_cc}
  COMMAND ${CMAKE_COMMAND} -DINPUT=${CMAKE_CURRENT_SOURCE_DIR}/server/viewer.html
          -DOUTPUT=${flowrag_viewer_cc} -P ${CMAKE_CURRENT_SOURCE_DIR}/server/embed_viewer.cmake
  DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/server/viewer.html
          ${CMAKE_CURRENT_SOURCE_DIR}/server/embed_viewer.cmake
  COMMENT "Embedding the viewer page src/server/viewer.html"
  VERBATIM)
target_sources(flowrag_server PRIVATE ${flowrag_viewer_cc})
