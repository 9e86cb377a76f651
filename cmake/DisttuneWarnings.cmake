# Compiler warnings shared by every disttune target.
function(disttune_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion)
  if(CMAKE_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # In a unity batch each source is an included file, where GCC takes a class of the
    # source's anonymous namespace, used by a member of a class of its own, for a header's.
    target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
  endif()
  if(DISTTUNE_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
