# CLI11 (header-only; Debian: libcli11-dev): the C++ disttune tool's parser. Defines CLI11::CLI11
# when found, as the CMake package or as the bare headers.
find_package(CLI11 CONFIG QUIET)
if(NOT TARGET CLI11::CLI11)
  find_path(DISTTUNE_CLI11_INCLUDE_DIR CLI/CLI.hpp)
  if(DISTTUNE_CLI11_INCLUDE_DIR)
    add_library(CLI11::CLI11 INTERFACE IMPORTED)
    target_include_directories(CLI11::CLI11 INTERFACE ${DISTTUNE_CLI11_INCLUDE_DIR})
  endif()
endif()
