# Install rules and the package config for find_package(disttune).
include(CMakePackageConfigHelpers)

install(DIRECTORY include/disttune DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS disttune_core EXPORT disttuneTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT disttuneTargets NAMESPACE disttune:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/disttune)
install(FILES cmake/DisttuneSourceDigest.cmake DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/disttune)

configure_package_config_file(cmake/disttuneConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/disttuneConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/disttune)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/disttuneConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/disttuneConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/disttuneConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/disttune)
