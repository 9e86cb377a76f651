# One library per layer of src/layers.json, linked in the table's direction.
#
# disttune_add_layer(<name> SOURCES ... [LINK ...]) makes disttune_layer_<name>, an object
# library of the layer's sources (disttune::core is the archive of every core layer's
# objects), and, with DISTTUNE_CHECK_LAYERS, disttune_layer_check_<name>: a shared library of
# the same objects linked with --no-undefined against the check libraries of the layers it
# may use and nothing else of disttune. A call that reaches a layer it may not use (up, or
# sideways) is an undefined symbol there, and the build fails naming it.
option(DISTTUNE_CHECK_LAYERS "Link each layer alone to prove it calls no layer above it" ${PROJECT_IS_TOP_LEVEL})

set(disttune_layers_file ${PROJECT_SOURCE_DIR}/src/layers.json)
file(READ ${disttune_layers_file} disttune_layers_json)
set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${disttune_layers_file})

# The library, folders and used layers of layer <name>, from the table.
function(disttune_layer_entry name library_out dirs_out uses_out)
  string(JSON count LENGTH "${disttune_layers_json}" layers)
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    string(JSON entry_name GET "${disttune_layers_json}" layers ${i} name)
    if(NOT entry_name STREQUAL name)
      continue()
    endif()
    foreach(field dirs uses)
      set(values "")
      string(JSON n LENGTH "${disttune_layers_json}" layers ${i} ${field})
      if(n GREATER 0)
        math(EXPR n_last "${n} - 1")
        foreach(j RANGE ${n_last})
          string(JSON value GET "${disttune_layers_json}" layers ${i} ${field} ${j})
          list(APPEND values ${value})
        endforeach()
      endif()
      set(${field} ${values})
    endforeach()
    string(JSON library GET "${disttune_layers_json}" layers ${i} library)
    set(${library_out} ${library} PARENT_SCOPE)
    set(${dirs_out} ${dirs} PARENT_SCOPE)
    set(${uses_out} ${uses} PARENT_SCOPE)
    return()
  endforeach()
  message(FATAL_ERROR "src/layers.json has no layer '${name}'")
endfunction()

function(disttune_add_layer name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;LINK")
  disttune_layer_entry(${name} library dirs uses)
  if(NOT library STREQUAL "core")
    message(FATAL_ERROR "layer ${name} is part of '${library}' in src/layers.json, not of disttune::core")
  endif()
  foreach(source IN LISTS arg_SOURCES)
    set(inside OFF)
    foreach(dir IN LISTS dirs)
      string(REGEX REPLACE "^src/" "" dir "${dir}")
      if(source MATCHES "^${dir}/")
        set(inside ON)
      endif()
    endforeach()
    if(NOT inside)
      message(FATAL_ERROR "layer ${name}: ${source} is outside its folders (${dirs}) in src/layers.json")
    endif()
  endforeach()

  add_library(disttune_layer_${name} OBJECT ${arg_SOURCES})
  target_include_directories(disttune_layer_${name}
    PUBLIC ${PROJECT_SOURCE_DIR}/include PRIVATE ${PROJECT_SOURCE_DIR}/src)
  # Every layer compiles against the public headers, which use nlohmann-json.
  target_link_libraries(disttune_layer_${name} PUBLIC nlohmann_json::nlohmann_json ${arg_LINK})
  target_compile_features(disttune_layer_${name} PUBLIC cxx_std_20)
  disttune_set_warnings(disttune_layer_${name})
  set_property(GLOBAL APPEND PROPERTY DISTTUNE_CORE_LAYERS ${name})

  if(DISTTUNE_CHECK_LAYERS)
    add_library(disttune_layer_check_${name} SHARED $<TARGET_OBJECTS:disttune_layer_${name}>)
    set(used_checks "")
    foreach(used IN LISTS uses)
      if(NOT TARGET disttune_layer_check_${used})
        message(FATAL_ERROR "layer ${name} uses ${used}, which src/CMakeLists.txt has not added "
                            "before it (add layers lowest first, as src/layers.json lists them)")
      endif()
      list(APPEND used_checks disttune_layer_check_${used})
    endforeach()
    target_link_libraries(disttune_layer_check_${name} PUBLIC ${used_checks} PRIVATE ${arg_LINK})
    target_link_options(disttune_layer_check_${name} PRIVATE LINKER:--no-undefined)
  endif()
endfunction()

# disttune_check_backend(<name> [LINK ...]): the same link check for an optional backend
# library disttune_<name> (cuda_driver, cuda, mpi, nccl): its objects, linked with
# --no-undefined to the check libraries of the layers it may use and to LINK (its
# third-party libraries) only.
function(disttune_check_backend name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "LINK")
  if(NOT DISTTUNE_CHECK_LAYERS)
    return()
  endif()
  disttune_layer_entry(${name} library dirs uses)
  add_library(disttune_layer_check_${name} SHARED $<TARGET_OBJECTS:disttune_${name}>)
  set(used_checks "")
  foreach(used IN LISTS uses)
    list(APPEND used_checks disttune_layer_check_${used})
  endforeach()
  target_link_libraries(disttune_layer_check_${name} PUBLIC ${used_checks} PRIVATE ${arg_LINK})
  target_link_options(disttune_layer_check_${name} PRIVATE LINKER:--no-undefined)
endfunction()

# disttune_add_backend(<name> SOURCES ... [LINK ...] [CHECK_LINK ...]): the optional backend
# library disttune::<name> from src/<name>/: on top of disttune::core, linking LINK privately,
# with the project's warnings and disttune_check_backend (CHECK_LINK: its third-party
# libraries).
function(disttune_add_backend name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;LINK;CHECK_LINK")
  add_library(disttune_${name} ${arg_SOURCES})
  add_library(disttune::${name} ALIAS disttune_${name})
  set_target_properties(disttune_${name} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME disttune_${name})
  target_include_directories(disttune_${name} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(disttune_${name} PUBLIC disttune::core PRIVATE ${arg_LINK})
  disttune_set_warnings(disttune_${name})
  disttune_check_backend(${name} LINK ${arg_CHECK_LINK})
endfunction()
