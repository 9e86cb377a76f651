# disttune_source_digest(<target>): gives every C++ source of <target> the macro
# DISTTUNE_SOURCE_DIGEST, the SHA-256 of that source file, so a tuned function's
# identity changes whenever the file that defines its launcher changes.
function(disttune_source_digest target)
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  foreach(source IN LISTS sources)
    if(IS_ABSOLUTE "${source}")
      set(path "${source}")
    else()
      set(path "${source_dir}/${source}")
    endif()
    if(NOT EXISTS "${path}")
      continue()
    endif()
    file(SHA256 "${path}" digest)
    set_property(SOURCE "${source}" TARGET_DIRECTORY ${target} APPEND PROPERTY
                 COMPILE_DEFINITIONS "DISTTUNE_SOURCE_DIGEST=\"${digest}\"")
    # Re-run the configure step when the file changes, so the digest follows it.
    set_property(DIRECTORY "${source_dir}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${path}")
  endforeach()
endfunction()
