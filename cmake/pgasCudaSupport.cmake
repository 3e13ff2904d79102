# CUDA helpers shared by pgas's own build and its installed config.

# pgas_cccl_include_dir(var): where <cuda/atomic> and <nv/target> live, for host compilers.
# CUDA 13 moved CCCL under include/cccl, which nvcc searches on its own but
# CUDA::cudart does not add for g++/clang; the host transport needs it.
function(pgas_cccl_include_dir out_var)
  set(${out_var} "" PARENT_SCOPE)
  foreach(dir IN LISTS CUDAToolkit_INCLUDE_DIRS)
    if(EXISTS "${dir}/cccl/cuda/atomic")
      set(${out_var} "${dir}/cccl" PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

# pgas needs C++20 in CUDA sources too, and cxx_std_20 asks CMake for it. CMake
# before 3.26 does not know nvcc's -std=c++20 and refuses to generate; this
# teaches it, in the calling scope, for nvcc 12+ only (a no-op on newer CMake).
macro(pgas_teach_cmake_cuda20)
  if(CMAKE_CUDA_COMPILER_ID STREQUAL "NVIDIA" AND NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION
     AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
    list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
  endif()
endmacro()
