// Turning CUDA runtime and driver failures into pgas::error that names the call, the PE and the CUDA message; and
// device_guard, which makes a PE's GPU current for the calls made on its behalf.
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

// Makes `device` the calling thread's current CUDA device for a scope and then restores the one that was current:
// nothing when `device` < 0 or already current. Driver calls (cuMemGetAddressRange, cuMemMap, cuIpc*, ...) act in
// the current context, so a process that drives several GPUs (init_local(devices)) makes each PE's GPU current for
// the calls on that PE's behalf; restoring keeps a pgas call from changing the user's current device. The form with
// a PE and a call throws errc::cuda naming them when the device cannot be made current; the other (for clean-up
// and destructors) tries, and leaves the failure to the calls that follow.
class device_guard {
public:
    explicit device_guard(int device) noexcept {
        int current = -1;
        if (device < 0 || cudaGetDevice(&current) != cudaSuccess || current == device) return;
        if (cudaSetDevice(device) == cudaSuccess) previous_ = current;
        else (void)cudaGetLastError();
    }
    device_guard(int device, int pe, const char* call) {
        int current = -1;
        if (device < 0) return;
        check_cuda(cudaGetDevice(&current), pe, call, "cudaGetDevice");
        if (current == device) return;
        check_cuda(cudaSetDevice(device), pe, call, ("cudaSetDevice(" + std::to_string(device) + ")").c_str());
        previous_ = current;
    }
    ~device_guard() {
        if (previous_ >= 0 && cudaSetDevice(previous_) != cudaSuccess) (void)cudaGetLastError();
    }
    device_guard(const device_guard&) = delete;
    device_guard& operator=(const device_guard&) = delete;

private:
    int previous_ = -1;  // the device to restore; -1: nothing was changed
};

}  // namespace detail
PGAS_NAMESPACE_END
