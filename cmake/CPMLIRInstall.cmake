# Install rules and the CMake package (lib/cmake/cpmlir). The cp libraries
# are declared with DISABLE_INSTALL, which keeps add_mlir_library from
# putting them in MLIR's own export set; they are exported here, as
# CPMLIRTargets, so that find_package(CPMLIR) gives imported targets.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(CP_PYTHON_INSTALL_DIR python_packages)
set(CP_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/cpmlir)

set(CP_EXPORTED_LIBRARIES
  CPDialect CPAnalysis CPExtensions CPRaising CPSchemes CPBuffers
  CPRuntimeCalls CPAttentionCommon
  CPToLoops CPToGPU CPToMPI CPToNCCL ShardToCP CPUpstreamTransforms
  CPPipelines)
foreach(lib ${CP_EXPORTED_LIBRARIES})
  target_include_directories(${lib} INTERFACE
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()
target_include_directories(cp_runtime PUBLIC
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

set(CP_EXPORTED_TARGETS ${CP_EXPORTED_LIBRARIES} CPUpstreamCAPI CPMLIRCAPI cp_runtime
    cp-opt)
if(CP_ENABLE_CUDA)
  list(APPEND CP_EXPORTED_TARGETS cp_runtime_gpu)
endif()
install(TARGETS ${CP_EXPORTED_TARGETS}
  EXPORT CPMLIRTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS CPPlugin LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS cp-run-attention RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(PROGRAMS ${CMAKE_BINARY_DIR}/bin/cp-compile
  DESTINATION ${CMAKE_INSTALL_BINDIR})

# Headers: the sources and the TableGen output next to them. TestSupport
# (CPTestSupport) serves this project's own drivers and is not part of the
# package.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/cp ${PROJECT_SOURCE_DIR}/include/cp-c
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td"
  PATTERN "TestSupport" EXCLUDE)
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/cp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.inc"
  PATTERN "CMakeFiles" EXCLUDE)

if(CP_ENABLE_PYTHON)
  install(DIRECTORY ${CMAKE_BINARY_DIR}/python_packages/cp_mlir
    DESTINATION ${CP_PYTHON_INSTALL_DIR}
    USE_SOURCE_PERMISSIONS
    PATTERN "__pycache__" EXCLUDE)
endif()

install(EXPORT CPMLIRTargets DESTINATION ${CP_CMAKE_INSTALL_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/CPMLIRConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/CPMLIRConfig.cmake
  INSTALL_DESTINATION ${CP_CMAKE_INSTALL_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR CMAKE_INSTALL_LIBDIR
            CP_PYTHON_INSTALL_DIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/CPMLIRConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/CPMLIRConfig.cmake
              ${CMAKE_BINARY_DIR}/cmake/CPMLIRConfigVersion.cmake
  DESTINATION ${CP_CMAKE_INSTALL_DIR})
