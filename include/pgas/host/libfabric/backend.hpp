// The libfabric backend of the proxy: one RDM endpoint per PE, the registered heap, and fi_write/fi_read/fi_*atomic
// (the layers below: endpoint.hpp, windows.hpp, staging.hpp, posting.hpp); here the proxy::backend operations and
// the completion loop.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/core/ordering.hpp>
#include <pgas/host/libfabric/endpoint.hpp>
#include <pgas/host/libfabric/posting.hpp>
#include <pgas/host/libfabric/provider.hpp>
#include <pgas/host/libfabric/windows.hpp>
#include <pgas/transport/proxy/command.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

PGAS_NAMESPACE_BEGIN
namespace ofi {

// The fabric objects of one PE and the proxy-backend operations on them
// (models proxy::backend). Only the proxy thread calls put/get/atomic/
// signal/progress after setup. Local buffers reach the fabric three ways:
// inside the registered heap (zero copy), directly (providers without
// FI_MR_LOCAL, host memory), or staged through registered bounce buffers
// (FI_MR_LOCAL, and GPU memory whenever the heap is not FI_HMEM-registered:
// copied with cudaMemcpy, i.e. the copy engine).
//
// Put delivery (what quiet waits for), libfabric_options::put_delivery:
//  - complete: every write carries FI_DELIVERY_COMPLETE; its completion
//    completes its command.
//  - flush: writes up to inject_size leave with fi_inject_write and no
//    completion; each is confirmed by the next read, fetching atomic or
//    delivery-complete write to the same PE that completes (the endpoint is
//    opened with FI_ORDER_RMA_RAW|FI_ORDER_RMA_WAW, so that op was processed
//    after them; atomics count only under FI_ORDER_RAW|FI_ORDER_WAW, which
//    orders them with RMA). When nothing else goes to that PE, a flush (an
//    8-byte FI_ATOMIC_READ of the PE's heap where atomics are ordered with
//    RMA, else an fi_read) is posted: when the proxy asks
//    (quiet, fence, an idle ring with commands outstanding) or every
//    `flush_every` unconfirmed puts (so credits keep flowing).
// Either way, adjacent small puts (consecutive commands, one PE, contiguous
// remote ranges) are merged into one write of up to `coalesce_bytes`.
class fabric_backend : public fabric_posting {
public:
    // How it sets itself up (endpoint.hpp).
    using setup = fabric_setup;

    fabric_backend(const fi_info* chosen, const setup& s) : fabric_posting(s) {
        try {
            open(chosen);
        } catch (...) {
            close();
            throw;
        }
    }

    fabric_backend(const fabric_backend&) = delete;
    fabric_backend& operator=(const fabric_backend&) = delete;
    ~fabric_backend() { close(); }

private:
    void open(const fi_info* chosen) {
        open_endpoint(chosen);
        open_records();
        open_staging();
        fill_card();
    }

    // Every layer's objects, in the order the providers accept.
    void close() {
        close_endpoint();
        close_windows();
        close_staging_registration();
        close_fabric();
        free_staging();
    }

public:
    // --- proxy::backend ------------------------------------------------------

    std::uint32_t put(std::uint64_t token, int pe, std::uint64_t remote, const void* src, std::size_t bytes,
                      bool device) {
        return split(token, kind::write, pe, heap_target(pe), remote, const_cast<void*>(src), bytes, device);
    }
    std::uint32_t get(std::uint64_t token, int pe, void* dst, std::uint64_t remote, std::size_t bytes, bool device) {
        return split(token, kind::read, pe, heap_target(pe), remote, dst, bytes, device);
    }
    std::uint32_t atomic(std::uint64_t token, int pe, std::uint64_t remote, amo op, proxy::value_kind k,
                         std::uint64_t operand, std::uint64_t compare, void* result) {
        return queue_atomic(token, pe, heap_target(pe), remote, op, k, operand, compare, result);
    }
    std::uint32_t signal(std::uint64_t token, int pe, std::uint64_t remote, signal_op op, std::uint64_t value) {
        return atomic(token, pe, remote, op == signal_op::set ? amo::set : amo::fetch_add, proxy::value_kind::u64,
                      value, 0, nullptr);
    }

    // --- registered windows (proxy::window_backend) ----------------------------
    // The same operations into registered window `window` (its table offset) at byte `remote` of PE pe's buffer,
    // with the key and address PE pe published for it (connect_window).
    std::uint32_t window_put(std::uint64_t token, int pe, std::uint64_t window, std::uint64_t remote, const void* src,
                             std::size_t bytes, bool device) {
        return split(token, kind::write, pe, window_target(kind::write, pe, window), remote, const_cast<void*>(src),
                     bytes, device);
    }
    std::uint32_t window_get(std::uint64_t token, int pe, void* dst, std::uint64_t window, std::uint64_t remote,
                             std::size_t bytes, bool device) {
        return split(token, kind::read, pe, window_target(kind::read, pe, window), remote, dst, bytes, device);
    }
    std::uint32_t window_atomic(std::uint64_t token, int pe, std::uint64_t window, std::uint64_t remote, amo op,
                                proxy::value_kind k, std::uint64_t operand, std::uint64_t compare, void* result) {
        return queue_atomic(token, pe, window_target(kind::atomic, pe, window), remote, op, k, operand, compare,
                            result);
    }

    // Reads completions (which also drives the provider's progress, for
    // this PE's operations and for the peers' operations targeting it) and
    // posts queued work. Throws on an error completion, naming the op.
    template <class OnComplete>
    bool progress(OnComplete&& on_complete) {
        bool any = false;
        fi_cq_entry entries[32];
        for (;;) {
            const ssize_t n = fi_cq_read(cq_, entries, 32);
            if (n == -FI_EAGAIN) break;
            if (n == -FI_EAVAIL) report_error_completion();
            if (n < 0) fail(errc::system, s_.pe, "libfabric proxy", describe("fi_cq_read", long(n)));
            for (ssize_t i = 0; i < n; ++i) finish(*static_cast<record*>(entries[i].op_context), on_complete);
            any = true;
            if (n < 32) break;
        }
        const bool busy = pump() || any;
        if (busy) {
            stalled_since_ns_ = -1;
        } else if ((++idle_polls_ & 1023) == 0 && s_.stall_report_ns > 0) {
            watch_for_stall();
        }
        return busy;
    }

private:
    template <class OnComplete>
    void finish(record& r, OnComplete& on_complete) {
        if (r.copy_to) copy(r.copy_to, r.copy_from, r.bytes, r.device_copy, cudaMemcpyHostToDevice);
        if (r.bounce >= 0) free_bounce_.push_back(r.bounce);
        free_records_.push_back(r.index);
        if (r.what == kind::flush) --peers_[std::size_t(r.pe)].flushes;
        if (s_.flush_delivery) confirm(r.pe, r.confirms, on_complete);
        for (std::uint32_t i = 0; i < r.tokens; ++i) on_complete(r.token + i);
    }

    // Completes the puts injected to `pe` up to sequence `upto`.
    template <class OnComplete>
    void confirm(int pe, std::uint64_t upto, OnComplete& on_complete) {
        peer& p = peers_[std::size_t(pe)];
        if (upto <= p.confirmed) return;
        p.confirmed = upto;
        while (!p.waiting.empty() && p.waiting.front().seq <= upto) {
            const injected_put put = p.waiting.front();
            p.waiting.pop_front();
            for (std::uint32_t i = 0; i < put.count; ++i) on_complete(put.token + i);
        }
    }

    [[noreturn]] void report_error_completion() {
        fi_cq_err_entry err{};
        fi_cq_readerr(cq_, &err, 0);
        std::string what = "an injected fi_write (flush delivery)";
        if (auto* r = static_cast<record*>(err.op_context)) {
            what = std::string(op_name(r->what)) + " to PE " + std::to_string(r->pe) + " (" + std::to_string(r->bytes) +
                   " bytes)";
        }
        const char* text = fi_cq_strerror(cq_, err.prov_errno, err.err_data, nullptr, 0);
        fail(errc::system, s_.pe, "libfabric proxy",
             what + " failed with provider " + provider() + ": " + fi_strerror(err.err) + " (" + (text ? text : "") +
                 ")");
    }

    // Called every 1024 idle polls: once work has been outstanding with
    // nothing completing or posted for setup::stall_report_ns, says on
    // stderr (once per stall) which operation waits and whether the provider
    // took it, so a hang in the provider names the op before any timeout.
    void watch_for_stall() {
        const bool outstanding = free_records_.size() < records_.size() || !queue_.empty() || !dirty_.empty();
        if (!outstanding) {
            stalled_since_ns_ = -1;
            return;
        }
        const std::int64_t now = clock_ns();
        if (stalled_since_ns_ < 0) {
            stalled_since_ns_ = now, stall_reported_ = false;
            return;
        }
        if (stall_reported_ || now - stalled_since_ns_ < s_.stall_report_ns) return;
        stall_reported_ = true;
        std::vector<bool> free(records_.size(), false);
        for (std::uint32_t i : free_records_) free[i] = true;
        const record* oldest = nullptr;
        std::size_t posted = 0;
        for (const record& r : records_)
            if (!free[r.index]) {
                ++posted;
                if (!oldest || r.posted_ns < oldest->posted_ns) oldest = &r;
            }
        std::string text = "pgas: libfabric proxy of PE " + std::to_string(s_.pe) + " (" + provider() +
                           "): nothing completed or posted for " + std::to_string((now - stalled_since_ns_) / 1000000) +
                           " ms; " + std::to_string(posted) + " operation(s) posted without completion";
        if (oldest)
            text += ", the oldest " + std::string(op_name(oldest->what)) + " to PE " + std::to_string(oldest->pe) +
                    " (" + std::to_string(oldest->bytes) + " bytes), posted " +
                    std::to_string((now - oldest->posted_ns) / 1000000) + " ms ago";
        if (!queue_.empty()) {
            const work& w = queue_.front();
            text += "; " + std::to_string(queue_.size()) + " queued, the first " + op_name(w.what) + " to PE " +
                    std::to_string(w.pe) + " (" + std::to_string(w.bytes) + " bytes at " + where(w) +
                    ") not accepted by the provider (-FI_EAGAIN) or waiting for a free " + "record or bounce buffer";
        }
        text += (s_.heap_is_gpu ? "; FI_HMEM: the target's provider copies with CUDA on its proxy thread "
                                  "(FI_LOG_LEVEL=warn shows its side)"
                                : "");
        std::fprintf(stderr, "%s\n", text.c_str());
    }

    std::int64_t stalled_since_ns_ = -1;  // watch_for_stall: first idle poll of this stall (-1: none)
    bool stall_reported_ = false;
    std::uint32_t idle_polls_ = 0;
};

}  // namespace ofi
PGAS_NAMESPACE_END
