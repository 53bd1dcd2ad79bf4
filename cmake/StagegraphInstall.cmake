# `cmake --install build --prefix PREFIX`: the public headers, libstagegraph.so and
# libstagegraph.a, the CMake package (find_package(stagegraph): stagegraph::runtime,
# stagegraph::runtime_static), pkg-config modules (stagegraph, stagegraph-static) and
# the tools.
include(CMakePackageConfigHelpers)
set(SG_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/stagegraph)

# The core's headers (core/include/stagegraph) and the runtime's, in one folder.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/stagegraph ${PROJECT_SOURCE_DIR}/runtime/include/stagegraph
                  ${SG_GENERATED_INCLUDE_DIR}/stagegraph
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT runtime FILES_MATCHING PATTERN "*.h")
install(TARGETS stagegraph EXPORT stagegraph-targets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT runtime)
install(TARGETS stagegraph_static EXPORT stagegraph-static-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime)
install(EXPORT stagegraph-targets NAMESPACE stagegraph:: DESTINATION ${SG_INSTALL_CMAKEDIR} COMPONENT runtime)
install(EXPORT stagegraph-static-targets NAMESPACE stagegraph:: DESTINATION ${SG_INSTALL_CMAKEDIR} COMPONENT runtime)

# 0.x: any minor version may change the API (as the SONAME says); from 1.0 on, a
# newer minor version serves a request for an older one.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(SG_COMPATIBILITY SameMinorVersion)
else()
  set(SG_COMPATIBILITY SameMajorVersion)
endif()
if(TARGET sg_kernels_xnnpack)
  set(SG_STATIC_NEEDS_XNNPACK ON)
  set(SG_STATIC_PC_LIBS " -lXNNPACK -lpthreadpool")
else()
  set(SG_STATIC_NEEDS_XNNPACK OFF)
  set(SG_STATIC_PC_LIBS "")
endif()
string(APPEND SG_STATIC_PC_LIBS " -pthread")
foreach(lib IN LISTS SG_CXX_RUNTIME_LIBRARIES)
  string(APPEND SG_STATIC_PC_LIBS " -l${lib}")
endforeach()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/stagegraphConfig.cmake.in
  ${PROJECT_BINARY_DIR}/stagegraphConfig.cmake INSTALL_DESTINATION ${SG_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/stagegraphConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY ${SG_COMPATIBILITY})
install(FILES ${PROJECT_BINARY_DIR}/stagegraphConfig.cmake ${PROJECT_BINARY_DIR}/stagegraphConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/StagegraphXNNPACK.cmake
        DESTINATION ${SG_INSTALL_CMAKEDIR} COMPONENT runtime)

# pkg-config, relocatable: the prefix is found from the .pc file's own folder.
set(SG_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${SG_PC_DIR}")
  set(SG_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH SG_PC_PREFIX_REL "/${SG_PC_DIR}" "/")
  string(REGEX REPLACE "/$" "" SG_PC_PREFIX_REL "${SG_PC_PREFIX_REL}")
  set(SG_PC_PREFIX "\${pcfiledir}/${SG_PC_PREFIX_REL}")
endif()
foreach(pc stagegraph stagegraph-static)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc}.pc DESTINATION ${SG_PC_DIR} COMPONENT runtime)
endforeach()

if(SG_BUILD_COMPILER_AND_TOOLS)
  install(TARGETS graph-compile graph-run graph-inspect RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)
endif()
