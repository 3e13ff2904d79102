# pgas::libfabric: the CPU-proxy transport over libfabric (found with pkg-config); defines nothing when absent.
# Include it after pgas::pgas exists; the top-level CMakeLists.txt (and pgasConfig.cmake) may include it.
if(TARGET pgas_libfabric)
  set(PGAS_HAVE_LIBFABRIC TRUE)  # variables are per directory; the target is global
  return()
endif()
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(LIBFABRIC QUIET IMPORTED_TARGET libfabric)
endif()
if(LIBFABRIC_FOUND)
  add_library(pgas_libfabric INTERFACE)
  add_library(pgas::libfabric ALIAS pgas_libfabric)
  target_link_libraries(pgas_libfabric INTERFACE pgas::pgas PkgConfig::LIBFABRIC)
  set(PGAS_HAVE_LIBFABRIC TRUE)
else()
  set(PGAS_HAVE_LIBFABRIC FALSE)
endif()
