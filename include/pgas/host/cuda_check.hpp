// Turning CUDA runtime and driver failures into pgas::error that names the call, the PE and the CUDA message.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/host/cuda_driver.hpp>

#include <string>

#include <cuda.h>
#include <cuda_runtime_api.h>

PGAS_NAMESPACE_BEGIN
namespace detail {

inline void check_cuda(cudaError_t status, int pe, const char* call, const char* what) {
    if (status != cudaSuccess)
        throw_error(errc::cuda, pe, call,
                    std::string(what) + " failed: " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
}

inline void check_cu(CUresult status, int pe, const char* call, const char* what) {
    if (status != CUDA_SUCCESS) {
        const char* name = "?";
        const char* text = "?";
        driver().cuGetErrorName(status, &name);
        driver().cuGetErrorString(status, &text);
        throw_error(errc::cuda, pe, call, std::string(what) + " failed: " + name + " (" + text + ")");
    }
}

}  // namespace detail
PGAS_NAMESPACE_END
