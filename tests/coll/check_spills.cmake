# Fails when an on-stream collective kernel, compiled as programs build it, spills registers to local memory. With
# only a thread count in the launch bound, ptxas took the broadcast kernels to 64 registers (two blocks per SM)
# and spilled 312-328 bytes; a cold branch added elsewhere was enough to tip it.
#   cmake -DNVCC=... -DSOURCE=stream_compile.cu -DINCLUDES="dir|dir" -DWORK=dir -P check_spills.cmake
include(${CMAKE_CURRENT_LIST_DIR}/../ptxas_report.cmake)
ptxas_report(${SOURCE} "${INCLUDES}" ${WORK} names registers spills)
list(LENGTH names checked)
if(checked LESS 20)
  message(FATAL_ERROR "collective spill check: found ${checked} kernels in ptxas's report, expected every "
                      "on-stream collective")
endif()
set(failures "")
foreach(name spilled IN ZIP_LISTS names spills)
  if(NOT spilled EQUAL 0)
    string(APPEND failures "\n  ${name}: ${spilled} bytes spilled (stores and loads)")
  endif()
endforeach()
if(failures)
  message(FATAL_ERROR "collective spill check: on-stream kernels spill registers (pass the launch bound's minimum "
                      "blocks per SM, as host/stream/collectives.cuh does):${failures}")
endif()
message(STATUS "collective spill check: none of the ${checked} on-stream kernels spills")
