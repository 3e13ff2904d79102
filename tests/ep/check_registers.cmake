# Fails when a pgas::ep kernel, compiled as programs and bench_moe build it (sm_90, -O3, no PGAS_CHECKS), needs so
# many registers that two blocks of 256 threads no longer fit one SM: pgas::ep::resident_blocks would then quietly
# give every phase half the blocks it asks for (d69a99f's combine took 182 registers; it read 0.40 of the copy rate).
#   cmake -DNVCC=... -DSOURCE=kernels.cu -DINCLUDES="dir|dir" -DWORK=dir -P check_registers.cmake
include(${CMAKE_CURRENT_LIST_DIR}/../ptxas_report.cmake)
set(threads 256)
set(blocks_per_sm 2)
set(registers_per_sm 65536)
ptxas_report(${SOURCE} "${INCLUDES}" ${WORK} names registers spills)
set(checked 0)
set(failures "")
foreach(name used IN ZIP_LISTS names registers)
  if(NOT name MATCHES "^_ZN4pgas.*2ep6detail[0-9]+((dispatch|combine)_kernel).*[0-9]+((low_latency|throughput)_layout)")
    continue()
  endif()
  set(kernel "${CMAKE_MATCH_1}<${CMAKE_MATCH_3}>")
  # Registers are allocated per warp in units of 256 (8 per thread).
  math(EXPR allocated "(${used} + 7) / 8 * 8")
  math(EXPR need "${allocated} * ${threads} * ${blocks_per_sm}")
  message(STATUS "${kernel}: ${used} registers a thread; ${blocks_per_sm} blocks of ${threads} need ${need} of ${registers_per_sm}")
  math(EXPR checked "${checked} + 1")
  if(need GREATER registers_per_sm)
    string(APPEND failures "\n  ${kernel} uses ${used} registers a thread: ${blocks_per_sm} blocks of ${threads} threads need ${need} of an SM's ${registers_per_sm}")
  endif()
endforeach()
if(NOT checked EQUAL 4)
  message(FATAL_ERROR "ep register check: found ${checked} of the 4 ep kernels in ptxas's report")
endif()
if(failures)
  message(FATAL_ERROR "ep register check: every ep kernel must fit ${blocks_per_sm} blocks per SM "
                      "(pgas::ep::resident_blocks asks for that many):${failures}")
endif()
message(STATUS "ep register check: the 4 kernels fit ${blocks_per_sm} blocks of ${threads} threads per SM")
