# `cmake --install build --prefix P` (docs/builder.md, "Using ampc from
# another project"):
#   P/bin                 ampc, ampc-opt, ampc-plan-run
#   P/lib                 the static libraries (and the CUDA plugin)
#   P/include/ampc        the public headers and the ones they include
#   P/lib/cmake/ampc      ampcConfig.cmake: targets ampc::builder, ampc::runtime
# The libraries are static: a program built against P needs no ampc library
# at run time. The shared libraries they depend on (MLIR's, OpenBLAS's) are
# found through the rpath CMake writes into the program.
include(CMakePackageConfigHelpers)

set(AMPC_RUNTIME_LIBS AmpcRuntimeCore AmpcCpuBackend AmpcRuntime)
if(TARGET AmpcMpi)
  list(APPEND AMPC_RUNTIME_LIBS AmpcMpi)
endif()
set(AMPC_BUILDER_LIBS)
if(NOT AMPC_RUNTIME_ONLY)
  set(AMPC_BUILDER_LIBS AmpcGraph AmpcPasses AmpcPlanOpt AmpcCompiler AmpcModels)
endif()

# Installed headers include each other as "ampc/...": the include folder is
# the only one a user's project adds (InstallHeaders.cmake).
target_include_directories(AmpcRuntimeCore INTERFACE $<INSTALL_INTERFACE:include>)

# The two targets users link.
add_library(ampc_runtime INTERFACE)
target_link_libraries(ampc_runtime INTERFACE AmpcRuntime)
target_compile_features(ampc_runtime INTERFACE cxx_std_17)
set_target_properties(ampc_runtime PROPERTIES EXPORT_NAME runtime)
add_library(ampc::runtime ALIAS ampc_runtime)
set(AMPC_EXPORTED ${AMPC_RUNTIME_LIBS} ampc_runtime)
if(NOT AMPC_RUNTIME_ONLY)
  add_library(ampc_builder INTERFACE)
  target_link_libraries(ampc_builder INTERFACE AmpcModels AmpcCompiler)
  target_compile_features(ampc_builder INTERFACE cxx_std_17)
  set_target_properties(ampc_builder PROPERTIES EXPORT_NAME builder)
  add_library(ampc::builder ALIAS ampc_builder)
  list(APPEND AMPC_EXPORTED ${AMPC_BUILDER_LIBS} ampc_builder)
endif()

install(TARGETS ${AMPC_EXPORTED} EXPORT ampcTargets ARCHIVE DESTINATION lib)
install(EXPORT ampcTargets NAMESPACE ampc:: DESTINATION lib/cmake/ampc)

# The tools, with rpaths to the shared libraries they were linked with
# (MLIR's and OpenBLAS's folders are not on the loader's default path).
set(AMPC_TOOLS ampc-plan-run)
if(NOT AMPC_RUNTIME_ONLY)
  list(APPEND AMPC_TOOLS ampc ampc-opt)
endif()
set_target_properties(${AMPC_TOOLS} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS ${AMPC_TOOLS} RUNTIME DESTINATION bin)
# The CUDA plugin beside the libraries: the registry looks in the program's
# ../lib, and a user's program finds it through the rpath the package adds.
# So is the CUDA backend built for the host (cuda-emulated), which the
# registry lists wherever it was built.
foreach(plugin ampc-cuda ampc-cuda-emulated)
  if(TARGET ${plugin})
    set_target_properties(${plugin} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
    install(TARGETS ${plugin} LIBRARY DESTINATION lib)
  endif()
endforeach()

# The public headers: the entry points below and every header of ours they
# include, installed under include/ampc/ with their includes prefixed.
set(AMPC_PUBLIC_HEADERS
    runtime/Runtime.h runtime/core/Version.h runtime/core/Plan.h
    runtime/device/Executor.h runtime/driver/Trainer.h runtime/driver/Runner.h
    runtime/driver/Checkpoint.h runtime/driver/Weights.h runtime/driver/Metrics.h)
if(NOT AMPC_RUNTIME_ONLY)
  list(APPEND AMPC_PUBLIC_HEADERS
       compiler/Builder.h compiler/GraphBuilder.h compiler/Layers.h compiler/GraphIO.h
       compiler/Pipelines.h compiler/Lowering.h compiler/PrecisionReport.h
       compiler/GraphDot.h models/Models.h)
endif()
install(CODE "
  set(AMPC_SOURCE_DIR \"${PROJECT_SOURCE_DIR}\")
  set(AMPC_BINARY_DIR \"${PROJECT_BINARY_DIR}\")
  set(AMPC_PUBLIC_HEADERS \"${AMPC_PUBLIC_HEADERS}\")")
install(SCRIPT ${PROJECT_SOURCE_DIR}/cmake/InstallHeaders.cmake)

# The package: its config, version and targets.
set(AMPC_CONFIG_HAS_BUILDER TRUE)
if(AMPC_RUNTIME_ONLY)
  set(AMPC_CONFIG_HAS_BUILDER FALSE)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ampcConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/cmake/ampcConfig.cmake
                              INSTALL_DESTINATION lib/cmake/ampc)
# 0.x: a minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/ampcConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/ampcConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/ampcConfigVersion.cmake
        DESTINATION lib/cmake/ampc)
