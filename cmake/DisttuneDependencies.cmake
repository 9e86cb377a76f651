# The engine's required libraries, found or named in one clear error. nlohmann_json: the
# system's CMake package, else the headers of PyPI's nlohmann-json (a build requirement of
# `pip install .`). OpenSSL's libcrypto: from the system.
find_package(nlohmann_json 3.10 CONFIG QUIET)
if(NOT nlohmann_json_FOUND)
  find_package(Python 3.9 QUIET COMPONENTS Interpreter)
  if(Python_Interpreter_FOUND)
    execute_process(
      COMMAND "${Python_EXECUTABLE}" -c "import nlohmann_json; print(nlohmann_json.get_include())"
      OUTPUT_VARIABLE disttune_json_include OUTPUT_STRIP_TRAILING_WHITESPACE
      RESULT_VARIABLE disttune_json_status ERROR_QUIET)
  endif()
  if(NOT disttune_json_status EQUAL 0 OR NOT EXISTS "${disttune_json_include}/nlohmann/json.hpp")
    message(FATAL_ERROR "disttune needs nlohmann_json >= 3.10: install nlohmann-json3-dev "
      "(Debian/Ubuntu) or json-devel (Fedora), or `pip install nlohmann-json` into the Python "
      "that builds disttune")
  endif()
  # The version macros live in detail/abi_macros.hpp since 3.11, in json.hpp before.
  set(disttune_json_version_header "${disttune_json_include}/nlohmann/detail/abi_macros.hpp")
  if(NOT EXISTS "${disttune_json_version_header}")
    set(disttune_json_version_header "${disttune_json_include}/nlohmann/json.hpp")
  endif()
  file(STRINGS "${disttune_json_version_header}" disttune_json_version_lines
       REGEX "#define NLOHMANN_JSON_VERSION_(MAJOR|MINOR) +[0-9]+")
  string(REGEX REPLACE ".*MAJOR +([0-9]+).*MINOR +([0-9]+).*" "\\1.\\2" disttune_json_version
         "${disttune_json_version_lines}")
  if(disttune_json_version VERSION_LESS 3.10)
    message(FATAL_ERROR "disttune needs nlohmann_json >= 3.10; ${disttune_json_include} has "
      "${disttune_json_version}: `pip install -U nlohmann-json`")
  endif()
  message(STATUS "disttune: nlohmann_json ${disttune_json_version} headers from PyPI's "
    "nlohmann-json at ${disttune_json_include}")
  add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
  target_include_directories(nlohmann_json::nlohmann_json SYSTEM INTERFACE "${disttune_json_include}")
endif()

find_package(OpenSSL COMPONENTS Crypto)
if(NOT OpenSSL_FOUND)
  message(FATAL_ERROR "disttune needs OpenSSL's headers and libcrypto (for SHA-256): install "
    "libssl-dev (Debian/Ubuntu) or openssl-devel (Fedora/RHEL)")
endif()
