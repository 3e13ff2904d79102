# Consumer through pkg-config, as a Makefile would: compile consumer_app.cpp with the flags `pkg-config --cflags
# --libs pgas` gives for the installed tree, and an NVSHMEM program with those of pgas-nvshmem (the installed headers
# and libpgas_nvshmem.so), run both, and check every installed .pc file parses.
#   cmake -DSTAGE=<install prefix> -DLIBDIR=<lib dir name> -DCXX=<compiler> -DSOURCE=<consumer_app.cpp>
#         -DNVSHMEM_SOURCE=<an NVSHMEM host program> -DOUT=<dir> -P ...
find_program(PKG_CONFIG pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} "${STAGE}/${LIBDIR}/pkgconfig")
file(GLOB pc_files "${STAGE}/${LIBDIR}/pkgconfig/pgas*.pc")
if(NOT pc_files)
  message(FATAL_ERROR "no pgas*.pc under ${STAGE}/${LIBDIR}/pkgconfig")
endif()
foreach(pc IN LISTS pc_files)
  get_filename_component(name ${pc} NAME_WE)
  execute_process(COMMAND ${PKG_CONFIG} --validate ${name} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config --validate ${name}: ${err}")
  endif()
  execute_process(COMMAND ${PKG_CONFIG} --cflags --libs ${name} RESULT_VARIABLE rc OUTPUT_VARIABLE flags
                  ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config --cflags --libs ${name}: ${err}")
  endif()
  message(STATUS "${name}: ${flags}")
endforeach()

execute_process(COMMAND ${PKG_CONFIG} --cflags --libs pgas OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE
                COMMAND_ERROR_IS_FATAL ANY)
separate_arguments(flags UNIX_COMMAND "${flags}")
# libcudart.so may live outside the loader's path (/usr/local/cuda/lib64): the .pc names the directory.
execute_process(COMMAND ${PKG_CONFIG} --variable=cuda_libdir pgas OUTPUT_VARIABLE cuda_libdir
                OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
file(MAKE_DIRECTORY ${OUT})
execute_process(COMMAND ${CXX} -std=c++20 ${SOURCE} -o ${OUT}/consumer_app ${flags} -Wl,-rpath,${cuda_libdir} COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${OUT}/consumer_app 3 COMMAND_ERROR_IS_FATAL ANY)

# An NVSHMEM program, unmodified, as one process (a world of one PE on the host transport).
execute_process(COMMAND ${PKG_CONFIG} --cflags --libs pgas-nvshmem OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE
                COMMAND_ERROR_IS_FATAL ANY)
separate_arguments(flags UNIX_COMMAND "${flags}")
execute_process(COMMAND ${CXX} -std=c++20 ${NVSHMEM_SOURCE} -o ${OUT}/consumer_nvshmem ${flags} -Wl,-rpath,${cuda_libdir}
                COMMAND_ERROR_IS_FATAL ANY)
set(ENV{PGAS_HEAP_SIZE} 16M)
execute_process(COMMAND ${OUT}/consumer_nvshmem COMMAND_ERROR_IS_FATAL ANY)
