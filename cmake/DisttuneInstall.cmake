# Install rules and the package config for find_package(disttune): disttune::core, and
# disttune::cuda, disttune::mpi, disttune::nccl when they were built.
include(CMakePackageConfigHelpers)

set(disttune_installed_targets disttune_core)
foreach(backend cuda mpi nccl)
  set(disttune_export_${backend} OFF)
  if(TARGET disttune_${backend})
    list(APPEND disttune_installed_targets disttune_${backend})
    set(disttune_export_${backend} ON)
  endif()
endforeach()

# The internal CUDA-driver target is not for consumers; it is installed because the static
# disttune::cuda and disttune::nccl link it.
if(TARGET disttune_cuda_driver)
  list(APPEND disttune_installed_targets disttune_cuda_driver)
endif()

install(DIRECTORY include/disttune DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ${disttune_installed_targets} EXPORT disttuneTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT disttuneTargets NAMESPACE disttune:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/disttune)
install(FILES cmake/DisttuneSourceDigest.cmake cmake/FindNCCL.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/disttune)

configure_package_config_file(cmake/disttuneConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/disttuneConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/disttune)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/disttuneConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/disttuneConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/disttuneConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/disttune)
