# Fails when an on-stream collective kernel, compiled as programs build it (sm_90, -O3, no PGAS_CHECKS), spills
# registers to local memory. With only a thread count in the launch bound, ptxas took the broadcast kernels to 64
# registers (two blocks per SM) and spilled 312-328 bytes; a cold branch added elsewhere was enough to tip it.
#   cmake -DNVCC=... -DSOURCE=stream_compile.cu -DINCLUDES="dir|dir" -DWORK=dir -P check_spills.cmake
string(REPLACE "|" ";" INCLUDES "${INCLUDES}")
set(includes "")
foreach(dir IN LISTS INCLUDES)
  list(APPEND includes -I${dir})
endforeach()
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${NVCC} -std=c++20 -O3 -DNDEBUG -arch=sm_90 -cubin -Xptxas=-v ${includes} ${SOURCE}
                        -o ${WORK}/coll_kernels.cubin
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "collective spill check: nvcc failed (${rc}):\n${err}")
endif()
# ptxas prints, per kernel, "Compiling entry function '<mangled>'", then "N bytes stack frame, S bytes spill
# stores, L bytes spill loads", then "Used R registers".
string(REPLACE "\n" ";" lines "${out}${err}")
set(kernel "")
set(checked 0)
set(failures "")
foreach(line IN LISTS lines)
  if(line MATCHES "Compiling entry function '([^']*)'")
    set(kernel "${CMAKE_MATCH_1}")
  elseif(kernel AND line MATCHES "([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads")
    math(EXPR checked "${checked} + 1")
    if(NOT CMAKE_MATCH_1 EQUAL 0 OR NOT CMAKE_MATCH_2 EQUAL 0)
      string(APPEND failures "\n  ${kernel}: ${CMAKE_MATCH_1} bytes spill stores, ${CMAKE_MATCH_2} bytes spill loads")
    endif()
    set(kernel "")
  endif()
endforeach()
if(checked LESS 20)
  message(FATAL_ERROR "collective spill check: found ${checked} kernels in ptxas's report, expected every "
                      "on-stream collective:\n${out}${err}")
endif()
if(failures)
  message(FATAL_ERROR "collective spill check: on-stream kernels spill registers (pass the launch bound's minimum "
                      "blocks per SM, as coll_on_stream.cuh does):${failures}")
endif()
message(STATUS "collective spill check: none of the ${checked} on-stream kernels spills")
