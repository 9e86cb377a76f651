# test_cli: runs the disttune command (built when CLI11 is found) on a temporary cache root.
if(TARGET disttune_cli)
  disttune_add_unit_test(test_cli)
  target_compile_definitions(test_cli PRIVATE DISTTUNE_CLI="$<TARGET_FILE:disttune_cli>")
  add_dependencies(test_cli disttune_cli)
endif()
