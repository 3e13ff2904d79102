// The staging layer of the libfabric proxy: registered scratch (64 bytes per operation record, then bounce
// chunks), the copies through it, and the CUDA set-up of the proxy thread those copies run on.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/host/libfabric/provider.hpp>
#include <pgas/host/libfabric/windows.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

PGAS_NAMESPACE_BEGIN
namespace ofi {

// Local buffers outside the registered heap reach the fabric directly
// (providers without FI_MR_LOCAL, host memory) or staged through these
// registered bounce buffers (FI_MR_LOCAL, and GPU memory whenever the heap is
// not FI_HMEM-registered: copied with cudaMemcpy, i.e. the copy engine).
class fabric_staging : public fabric_windows {
public:
    // GPU bytes the proxy has copied to or from pinned host memory so far
    // (staging of GPU buffers outside the heap); any thread may ask.
    std::uint64_t staged_gpu_bytes() const { return staged_gpu_bytes_.load(std::memory_order_relaxed); }

    // On the proxy thread, at its start (true) and exit (false). With GPU
    // producers it makes the PE's GPU current (the provider's cudaMemcpy and
    // the staging copies run on this thread). With a GPU heap it also
    // registers this thread's stack with CUDA: libfabric 1.22's shm applies an
    // atomic on GPU memory by cudaMemcpy into a buffer on the stack of the
    // thread that progresses the target (prov/shm/src/smr_progress.c:621-664,
    // smr_do_atomic), and its cudaMemcpy wrapper follows any copy whose host
    // side CUDA does not know with cudaDeviceSynchronize (src/hmem_cuda.c:176-201,
    // ofi_cudaMemcpy), which never returns while a kernel of this process waits
    // for that very atomic (a signal, barrier_all, a fetch): the proxy thread
    // would hang for good. Registered, the stack is CUDA's, and no
    // synchronization happens.
    void on_proxy_thread(bool starting) {
        if (!starting) {
            if (stack_registered_) cudaHostUnregister(stack_base_);
            stack_registered_ = false;
            return;
        }
        if (s_.cuda_device >= 0) {
            const cudaError_t rc = cudaSetDevice(s_.cuda_device);
            if (rc != cudaSuccess)
                fail(errc::cuda, s_.pe, "libfabric proxy",
                     "cudaSetDevice(" + std::to_string(s_.cuda_device) +
                         ") on the proxy thread: " + cudaGetErrorString(rc));
        }
        if (s_.heap_is_gpu) register_stack();
    }

protected:
    using fabric_windows::fabric_windows;
    ~fabric_staging() = default;

    // Scratch: 64 bytes per operation record (atomic operands and
    // results, small staged payloads), then the bounce chunks.
    void open_staging() {
        scratch_bytes_ = std::size_t(s_.max_in_flight) * 64 + std::size_t(s_.bounce_chunks) * s_.bounce_chunk_bytes;
        if (s_.gpu_producers) {
            if (cudaHostAlloc(reinterpret_cast<void**>(&scratch_), scratch_bytes_, cudaHostAllocPortable) !=
                cudaSuccess)
                fail(errc::cuda, s_.pe, "libfabric_domain", "cudaHostAlloc of the staging buffers failed");
        } else {
            scratch_ = static_cast<std::byte*>(std::aligned_alloc(4096, (scratch_bytes_ + 4095) / 4096 * 4096));
        }
        std::memset(scratch_, 0, scratch_bytes_);
        scratch_mr_ = register_memory(scratch_, scratch_bytes_, FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE,
                                      2, false, "the staging buffers");
        scratch_desc_ = fi_mr_desc(scratch_mr_);
        for (std::uint32_t i = 0; i < s_.bounce_chunks; ++i) free_bounce_.push_back(i);
    }

    // The scratch's registration, after the windows' and before the heap's (fabric_backend::close).
    void close_staging_registration() {
        if (scratch_mr_) fi_close(&scratch_mr_->fid);
        scratch_mr_ = nullptr;
    }

    // The scratch memory and the copy stream, once the fabric is closed.
    void free_staging() {
        if (scratch_) {
            if (s_.gpu_producers)
                cudaFreeHost(scratch_);
            else
                std::free(scratch_);
        }
        if (stream_) cudaStreamDestroy(stream_);
        stream_ = nullptr;
        scratch_ = nullptr;
    }

    // Operation record `index`'s 64 scratch bytes.
    std::byte* record_scratch(std::uint32_t index) const { return scratch_ + std::size_t(index) * 64; }

    std::byte* bounce(int chunk) const {
        return scratch_ + std::size_t(s_.max_in_flight) * 64 + std::size_t(chunk) * s_.bounce_chunk_bytes;
    }

    bool in_heap(const void* p, std::size_t bytes) const {
        auto* b = static_cast<const std::byte*>(p);
        return b >= s_.heap_base && b + bytes <= s_.heap_base + s_.heap_bytes;
    }

    bool needs_staging(const void* local, std::size_t bytes, bool device) const {
        if (in_heap(local, bytes)) return false;
        return device || (mr_mode_ & FI_MR_LOCAL) || s_.force_staging;
    }

    // Staging copies of GPU memory run on the backend's own non-blocking
    // stream (made on the proxy thread at the first copy): the legacy default
    // stream would wait for every kernel on blocking streams, among them the
    // kernel that is waiting for this very copy's command (a deadlock).
    void copy(void* dst, const void* src, std::size_t bytes, bool device, cudaMemcpyKind direction) {
        if (!device) {
            std::memcpy(dst, src, bytes);
            return;
        }
        if (stream_ == nullptr) {
            if (s_.cuda_device >= 0) cudaSetDevice(s_.cuda_device);
            const cudaError_t rc = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
            if (rc != cudaSuccess) {
                stream_ = nullptr;
                fail(errc::cuda, s_.pe, "libfabric proxy",
                     std::string("creating the staging stream: ") + cudaGetErrorString(rc));
            }
        }
        staged_gpu_bytes_.fetch_add(bytes, std::memory_order_relaxed);
        cudaError_t rc = cudaMemcpyAsync(dst, src, bytes, direction, stream_);
        if (rc == cudaSuccess) rc = cudaStreamSynchronize(stream_);
        if (rc != cudaSuccess)
            fail(errc::cuda, s_.pe, "libfabric proxy",
                 std::string("staging ") + std::to_string(bytes) +
                     " bytes through pinned memory: " + cudaGetErrorString(rc));
    }

    fid_mr* scratch_mr_ = nullptr;
    void* scratch_desc_ = nullptr;
    std::byte* scratch_ = nullptr;
    std::size_t scratch_bytes_ = 0;
    std::vector<int> free_bounce_;

private:
    // See on_proxy_thread: the calling thread's whole stack (glibc reports it
    // without its guard page), registered with CUDA.
    void register_stack() {
        pthread_attr_t attr;
        void* base = nullptr;
        std::size_t bytes = 0;
        if (pthread_getattr_np(pthread_self(), &attr) != 0)
            fail(errc::system, s_.pe, "libfabric proxy", "pthread_getattr_np of the proxy thread failed");
        const int rc = pthread_attr_getstack(&attr, &base, &bytes);
        pthread_attr_destroy(&attr);
        if (rc != 0) fail(errc::system, s_.pe, "libfabric proxy", "pthread_attr_getstack of the proxy thread failed");
        const cudaError_t reg = cudaHostRegister(base, bytes, cudaHostRegisterPortable);
        if (reg != cudaSuccess) {
            (void)cudaGetLastError();
            fail(errc::cuda, s_.pe, "libfabric proxy",
                 "cudaHostRegister of the proxy thread's stack (" + std::to_string(bytes) +
                     " bytes): " + cudaGetErrorString(reg) +
                     "; without it libfabric's shm would cudaDeviceSynchronize on every atomic into this GPU heap "
                     "(a hang while kernels wait)");
        }
        stack_base_ = base;
        stack_registered_ = true;
    }

    cudaStream_t stream_ = nullptr;  // staging copies (created on the proxy thread)
    void* stack_base_ = nullptr;     // the proxy thread's stack, registered with CUDA (GPU heap)
    bool stack_registered_ = false;
    std::atomic<std::uint64_t> staged_gpu_bytes_{0};
};

}  // namespace ofi
PGAS_NAMESPACE_END
