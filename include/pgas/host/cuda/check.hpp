// Turning CUDA runtime and driver failures into pgas::error that names the call, the PE and the CUDA message; and
// device_guard, which makes a PE's GPU current for the calls made on its behalf.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/host/cuda/driver.hpp>

#include <string>

#include <cuda.h>
#include <cuda_runtime_api.h>

PGAS_NAMESPACE_BEGIN
namespace detail {

inline void check_cuda(cudaError_t status, int pe, const char* call, const char* what) {
    if (status != cudaSuccess)
        throw_error(
            errc::cuda, pe, call,
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

// Makes `device` the calling thread's current CUDA device for a scope and then restores the one that was current:
// nothing when `device` < 0 or already current. Driver calls (cuMemGetAddressRange, cuMemMap, cuIpc*, ...) act in
// the current context, so a process that drives several GPUs (init_local(devices)) makes each PE's GPU current for
// the calls on that PE's behalf; restoring keeps a pgas call from changing the user's current device. The form with
// a PE and a call throws errc::cuda naming them when the device cannot be made current; the other never throws
// (clean-up, destructors, and callers that report a problem instead: status()).
class device_guard {
public:
    explicit device_guard(int device) noexcept {
        int current = -1;
        if (device < 0) return;
        status_ = cudaGetDevice(&current);
        if (status_ == cudaSuccess && current != device) {
            status_ = cudaSetDevice(device);
            if (status_ == cudaSuccess) previous_ = current;
        }
        if (status_ != cudaSuccess) (void)cudaGetLastError();
    }
    device_guard(int device, int pe, const char* call) : device_guard(device) {
        check_cuda(status_, pe, call, ("making GPU " + std::to_string(device) + " current").c_str());
    }
    ~device_guard() {
        if (previous_ >= 0 && cudaSetDevice(previous_) != cudaSuccess) (void)cudaGetLastError();
    }
    device_guard(const device_guard&) = delete;
    device_guard& operator=(const device_guard&) = delete;

    /// cudaSuccess, or why the device could not be made current.
    cudaError_t status() const { return status_; }

private:
    int previous_ = -1;  // the device to restore; -1: nothing was changed
    cudaError_t status_ = cudaSuccess;
};

}  // namespace detail
PGAS_NAMESPACE_END
