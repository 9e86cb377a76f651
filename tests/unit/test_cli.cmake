# test_command_arguments: the command table's checks (src/cli/command_arguments.cpp), no parser.
disttune_add_unit_test(test_command_arguments)
target_link_libraries(test_command_arguments PRIVATE disttune::command_line)
# test_cli: runs the disttune command (built when CLI11 is found) on a temporary cache root and
# on the replay tables.
if(TARGET disttune_cli)
  disttune_add_unit_test(test_cli)
  target_compile_definitions(test_cli PRIVATE DISTTUNE_CLI="$<TARGET_FILE:disttune_cli>"
                                              DISTTUNE_REPLAY_TABLES="${PROJECT_SOURCE_DIR}/tests/data/replay")
  add_dependencies(test_cli disttune_cli)
endif()
if(TARGET disttune_cli)
  disttune_add_unit_test(test_cli_table)
  target_compile_definitions(test_cli_table PRIVATE DISTTUNE_CLI="$<TARGET_FILE:disttune_cli>")
  add_dependencies(test_cli_table disttune_cli)
endif()
if(TARGET disttune_command_line)
  disttune_add_unit_test(test_report_page)
  target_link_libraries(test_report_page PRIVATE disttune::command_line)
endif()
