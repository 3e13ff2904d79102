# pgas::libfabric: the CPU-proxy transport over libfabric (found with pkg-config); defines nothing when absent.
# Include it after pgas::pgas exists; the top-level CMakeLists.txt (and pgasConfig.cmake) may include it.
if(TARGET pgas_libfabric)
  set(PGAS_HAVE_LIBFABRIC TRUE)  # variables are per directory; the target is global
  return()
endif()
# PGAS_LIBFABRIC_ROOT: an install prefix searched before every other place (e.g. the CUDA-enabled
# build of scripts/build-libfabric-cuda, ahead of a system libfabric built without FI_HMEM).
# The environment variable of the same name (scripts/env.sh sets it) is the default.
set(PGAS_LIBFABRIC_ROOT "$ENV{PGAS_LIBFABRIC_ROOT}" CACHE PATH "libfabric install prefix searched first")
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  set(_pgas_saved_pkg_config_path "$ENV{PKG_CONFIG_PATH}")
  if(PGAS_LIBFABRIC_ROOT)
    if(NOT EXISTS "${PGAS_LIBFABRIC_ROOT}/lib/pkgconfig/libfabric.pc")
      message(FATAL_ERROR "PGAS_LIBFABRIC_ROOT=${PGAS_LIBFABRIC_ROOT} holds no lib/pkgconfig/libfabric.pc")
    endif()
    # The environment's PKG_CONFIG_PATH comes before CMAKE_PREFIX_PATH in pkg-config's search: go first there.
    set(ENV{PKG_CONFIG_PATH} "${PGAS_LIBFABRIC_ROOT}/lib/pkgconfig:$ENV{PKG_CONFIG_PATH}")
  endif()
  pkg_check_modules(LIBFABRIC QUIET IMPORTED_TARGET libfabric)
  set(ENV{PKG_CONFIG_PATH} "${_pgas_saved_pkg_config_path}")
  unset(_pgas_saved_pkg_config_path)
  if(LIBFABRIC_FOUND AND PGAS_LIBFABRIC_ROOT)
    message(STATUS "pgas: libfabric ${LIBFABRIC_VERSION} from ${LIBFABRIC_LIBDIR}")
  endif()
endif()
if(LIBFABRIC_FOUND)
  add_library(pgas_libfabric INTERFACE)
  add_library(pgas::libfabric ALIAS pgas_libfabric)
  target_link_libraries(pgas_libfabric INTERFACE pgas::pgas PkgConfig::LIBFABRIC)
  set(PGAS_HAVE_LIBFABRIC TRUE)
else()
  set(PGAS_HAVE_LIBFABRIC FALSE)
endif()
