# disttune_source_digest(<target> [DEPENDS <file>...]): gives every C++ source of <target>
# the macro DISTTUNE_SOURCE_DIGEST, the SHA-256 of that source file (and of the DEPENDS
# files, e.g. a header that holds the launcher), so a tuned function's identity changes
# whenever the code that defines its launcher changes.
function(disttune_source_digest target)
  cmake_parse_arguments(arg "" "" "DEPENDS" ${ARGN})
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  set(depends_digests "")
  foreach(depend IN LISTS arg_DEPENDS)
    get_filename_component(path "${depend}" ABSOLUTE BASE_DIR "${source_dir}")
    if(NOT EXISTS "${path}")
      message(FATAL_ERROR "disttune_source_digest(${target}): ${path} does not exist")
    endif()
    file(SHA256 "${path}" digest)
    string(APPEND depends_digests "${digest}")
    set_property(DIRECTORY "${source_dir}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${path}")
  endforeach()
  foreach(source IN LISTS sources)
    get_filename_component(path "${source}" ABSOLUTE BASE_DIR "${source_dir}")
    if(NOT EXISTS "${path}")
      continue()
    endif()
    file(SHA256 "${path}" digest)
    if(depends_digests)
      string(SHA256 digest "${digest}${depends_digests}")
    endif()
    set_property(SOURCE "${source}" TARGET_DIRECTORY ${target} APPEND PROPERTY
                 COMPILE_DEFINITIONS "DISTTUNE_SOURCE_DIGEST=\"${digest}\"")
    # Re-run the configure step when the file changes, so the digest follows it.
    set_property(DIRECTORY "${source_dir}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${path}")
  endforeach()
endfunction()
