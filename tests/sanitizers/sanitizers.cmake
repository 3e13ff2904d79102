# The sanitizer lanes (PGAS_SANITIZER_LANES; scripts/env.sh turns it on in CI): twins of host suites built from
# the same sources, definitions and libraries with ASan+UBSan (lane asan) or TSan (lane tsan), at -O1 -g1, their
# tests labelled host and the lane's name. Host code only: no GPU code, benchmarks, examples or compile checks.
# Left out (the areas' CMakeLists.txt say why): process-mode cases under TSan, coll's data-movement and reduction
# cases, libfabric's RMA/atomic/window cases, and the ibgda emulated-NIC suite under ASan+UBSan (clean, 35 cases,
# but its twin costs 112 s of compile on 2 cores and exercises no fault path). That suite runs under TSan: its
# reports (the NIC thread's read of a put's source against the PE's write before the put) came from the doorbell
# record published by a release fence and a relaxed store, a synchronisation TSan does not model; the host's
# producers now publish it with a release store (transport/ibgda/access.hpp), and the suite is clean.
option(PGAS_SANITIZER_LANES "Build twins of the host suites under ASan+UBSan and TSan, and test them" OFF)
if(NOT PGAS_SANITIZER_LANES)
  return()
endif()
set(pgas_sanitize_asan -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
# -Wno-tsan: GCC warns at every standalone atomic_thread_fence that TSan does not model it, dozens of lines per
# translation unit (the library's GPU-side fences compiled for the host). What that can cost is a false report, which
# the lane would show (as a266c60's doorbell fence did); the warning itself says nothing about this code.
set(pgas_sanitize_tsan -fsanitize=thread -Wno-tsan)
# The runtimes come with the compiler (GCC: libasan, libubsan and libtsan, which libgcc-N-dev depends on).
include(CheckCXXSourceCompiles)
foreach(lane asan tsan)
  set(CMAKE_REQUIRED_FLAGS "${pgas_sanitize_${lane}}")
  list(JOIN CMAKE_REQUIRED_FLAGS " " CMAKE_REQUIRED_FLAGS)
  set(CMAKE_REQUIRED_LINK_OPTIONS ${pgas_sanitize_${lane}})
  check_cxx_source_compiles("int main() { return 0; }" pgas_can_${lane})
  if(NOT pgas_can_${lane})
    message(FATAL_ERROR "pgas: PGAS_SANITIZER_LANES: ${CMAKE_CXX_COMPILER} cannot build with ${pgas_sanitize_${lane}}"
                        " (its sanitizer runtimes are missing: with GCC, libasan, libubsan and libtsan)")
  endif()
endforeach()
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)

# pgas_sanitizer_twin(<target> <lane> [SOURCES <file>...] [RETARGET <target>...]): adds <target>_<lane>, built
# like <target> (or from SOURCES only: a subset of its suite) with the lane's flags and tests/sanitizers/options.cpp
# (the runtime options, suppressions). Each RETARGET names a program the suite starts, $<TARGET_FILE:x> in the
# definitions, which the twin starts as x_<lane> instead (that twin must exist).
function(pgas_sanitizer_twin target lane)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "SOURCES;RETARGET")
  set(twin ${target}_${lane})
  get_target_property(dir ${target} SOURCE_DIR)
  if(arg_SOURCES)
    set(sources ${arg_SOURCES})
  else()
    get_target_property(sources ${target} SOURCES)
  endif()
  list(TRANSFORM sources PREPEND ${dir}/ REGEX "^[^/]")
  add_executable(${twin} ${sources} ${PROJECT_SOURCE_DIR}/tests/sanitizers/options.cpp)
  # doctest's main, built once per lane with the lane's flags (the runner's threads and allocations are the lane's
  # to see too), stands in for pgas_doctest_main.
  if(NOT TARGET pgas_doctest_main_${lane})
    add_library(pgas_doctest_main_${lane} OBJECT ${PROJECT_SOURCE_DIR}/tests/doctest_main.cpp)
    target_link_libraries(pgas_doctest_main_${lane} PUBLIC doctest::doctest)
    target_compile_options(pgas_doctest_main_${lane} PRIVATE ${pgas_sanitize_${lane}} -O1 -g1)
  endif()
  foreach(property LINK_LIBRARIES COMPILE_DEFINITIONS COMPILE_OPTIONS INCLUDE_DIRECTORIES COMPILE_FEATURES)
    get_target_property(value ${target} ${property})
    if(value)
      foreach(program IN LISTS arg_RETARGET)
        string(REPLACE "$<TARGET_FILE:${program}>" "$<TARGET_FILE:${program}_${lane}>" value "${value}")
      endforeach()
      if(property STREQUAL "LINK_LIBRARIES")
        list(TRANSFORM value REPLACE "^pgas_doctest_main$" "pgas_doctest_main_${lane}")
      endif()
      # The lane sets its own level (-O1, below). A level the suite sets (pgas_host_tests: -O3) would come after the
      # directory's -O1, and CMake drops the twin's -O1 as a repeat of that one: the host suite's twins compiled at
      # -O3 (ASan: 312 of the lane's 516 CPU-s in CI).
      if(property STREQUAL "COMPILE_OPTIONS")
        list(FILTER value EXCLUDE REGEX "^-O")
      endif()
      set_property(TARGET ${twin} PROPERTY ${property} "${value}")
    endif()
  endforeach()
  # -g1: line tables and function names, which is all a sanitizer report symbolizes: its frames (inlined ones too),
  # globals and stack objects read as with -g (checked on an ASan overflow and a TSan race). -g's full debug info
  # costs about a quarter more compile time (window_test.cpp under ASan: 41 s against 30 s).
  target_compile_options(${twin} PRIVATE ${pgas_sanitize_${lane}} -O1 -g1)
  # A twin compiles its suite's sources a few to a translation unit (CMake's unity build): their shared instantiations
  # (world, transports, collectives) are compiled and instrumented once per batch, not once per file (host suite
  # under ASan, three of its files in one batch: 65 CPU-s against 94). The cases, and what the lane
  # instruments and reports, are the same; the plain host-only suites are batched alike (tests/CMakeLists.txt).
  set_target_properties(${twin} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 4)
  target_link_options(${twin} PRIVATE ${pgas_sanitize_${lane}})
  foreach(program IN LISTS arg_RETARGET)
    add_dependencies(${twin} ${program}_${lane})
  endforeach()
endfunction()

# pgas_tsan_test(<name> <twin> [args...]): one ctest test running the TSan twin through run-tsan.sh, which skips
# it (77, reason printed) where TSan cannot start on the kernel. Whole binaries, not discovered cases: discovery
# runs the binary at build time, and a kernel where TSan cannot start must skip the lane, not fail the build.
function(pgas_tsan_test name twin)
  add_test(NAME "tsan: ${name}"
           COMMAND ${PROJECT_SOURCE_DIR}/tests/sanitizers/run-tsan.sh $<TARGET_FILE:${twin}> ${ARGN})
  set_tests_properties("tsan: ${name}" PROPERTIES LABELS "host;tsan" TIMEOUT 600 SKIP_RETURN_CODE 77)
endfunction()

# pgas_asan_tests(<twin> <prefix> [<property> <value>...]): the ASan twin's doctest cases as tests "asan: <prefix>...",
# one per case as the plain suites, labelled host and asan (doctest_discover_tests' PROPERTIES cannot carry a list,
# so the labels are set by a file ctest includes after the discovered tests).
function(pgas_asan_tests twin prefix)
  doctest_discover_tests(${twin} TEST_PREFIX "asan: ${prefix}" TEST_LIST ${twin}_cases PROPERTIES ${ARGN})
  set(labels ${CMAKE_CURRENT_BINARY_DIR}/${twin}_labels.cmake)
  file(WRITE ${labels} "set_tests_properties(\${${twin}_cases} PROPERTIES LABELS \"host;asan\")\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${labels})
endfunction()
