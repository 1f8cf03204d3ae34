# `cmake --install build [--prefix P]`: the lmoracle program, the libraries, their headers and
# the built-in cases, with a CMake package so that another project's kernel tests can do
#   find_package(lmoracle REQUIRED)
#   target_link_libraries(my_kernel_test PRIVATE lmoracle::oracle GTest::gtest_main)
# and use EXPECT_MATCHES_REFERENCE (oracle/check/gtest_reference.h).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(LMO_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/lmoracle)
set(LMO_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/lmoracle)
set(LMO_INSTALL_CASESDIR ${CMAKE_INSTALL_DATADIR}/lmoracle/cases)

get_filename_component(LMO_QUADMATH_DIR ${QUADMATH_LIBRARY} DIRECTORY)  # a hint for the config

set(lmo_exported lmo_reference lmo_kernel_api lmo_fast lmo_oracle lmo_backends)
if(LMO_HAVE_CUDA)
  list(APPEND lmo_exported lmo_gpu)
endif()
# lmoracle::reference, ::kernel_api, ::fast, ::oracle, ::backends, ::gpu.
foreach(t ${lmo_exported})
  string(REPLACE "lmo_" "" export_name ${t})
  set_target_properties(${t} PROPERTIES EXPORT_NAME ${export_name})
  if(LMO_SANITIZE)
    # Instrumented libraries call the sanitizer runtimes, so a project linking the installed
    # package must link them too (here the top-level add_link_options does it).
    target_link_options(${t} INTERFACE $<INSTALL_INTERFACE:-fsanitize=address,undefined>)
  endif()
endforeach()
# An installed oracle finds its cases in the package, not in this source tree.
target_compile_definitions(lmo_oracle INTERFACE
  $<INSTALL_INTERFACE:LMORACLE_CASES_DIR="$<INSTALL_PREFIX>/${LMO_INSTALL_CASESDIR}">)

install(TARGETS ${lmo_exported} EXPORT lmoracleTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${LMO_INSTALL_INCLUDEDIR})
install(TARGETS lmoracle RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Headers keep their folders: consumers write #include "oracle/check/check.h" as this project does.
install(DIRECTORY reference kernels fast oracle DESTINATION ${LMO_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
if(LMO_HAVE_CUDA)
  # gpu/api.h and the family headers it includes; not gpu/api_checks.h, which is api.cc's own.
  install(FILES gpu/api.h gpu/api_attention.h gpu/api_ffn.h gpu/api_moe.h gpu/api_positional.h
          DESTINATION ${LMO_INSTALL_INCLUDEDIR}/gpu)
endif()
install(DIRECTORY cases/ DESTINATION ${LMO_INSTALL_CASESDIR} FILES_MATCHING PATTERN "*.json")

install(EXPORT lmoracleTargets NAMESPACE lmoracle:: DESTINATION ${LMO_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/lmoracleConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/lmoracleConfig.cmake
                              INSTALL_DESTINATION ${LMO_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/lmoracleConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/lmoracleConfig.cmake
              ${PROJECT_BINARY_DIR}/lmoracleConfigVersion.cmake
        DESTINATION ${LMO_INSTALL_CMAKEDIR})
