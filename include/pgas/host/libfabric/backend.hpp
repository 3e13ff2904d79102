// The libfabric backend of the proxy: one RDM endpoint per PE, the registered heap, and fi_write/fi_read/fi_*atomic.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/core/ordering.hpp>
#include <pgas/detail/heap_layout.hpp>
#include <pgas/host/libfabric/provider.hpp>
#include <pgas/transport/proxy/command.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

PGAS_NAMESPACE_BEGIN
namespace ofi {

// What one PE publishes to the others through the bootstrap.
struct address_card {
    char name[240];
    std::uint64_t name_len;
    std::uint64_t heap_base;  // virtual address (used when the provider wants FI_MR_VIRT_ADDR)
    std::uint64_t heap_key;
    std::int32_t pe;
    std::int32_t pad;
};

// What one PE publishes about its buffer of a registered window (libfabric_domain exchanges them).
struct window_card {
    std::uint64_t address;  // the buffer's virtual address (used when the provider wants FI_MR_VIRT_ADDR)
    std::uint64_t key;
    std::uint64_t bytes;
    std::int32_t pe;
    std::int32_t ok;  // 0: this PE could not register its buffer (its own error says why)
};

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
class fabric_backend {
public:
    struct setup {
        int pe = 0;
        int n_pes = 0;
        std::byte* heap_base = nullptr;
        std::uint64_t heap_bytes = 0;
        bool heap_is_gpu = false;
        bool gpu_producers = false;
        int cuda_device = -1;  // the PE's GPU: made current on the proxy thread before staging copies
        bool force_staging = false;  // stage host buffers too (libfabric_options::stage_local_buffers)
        std::uint32_t max_in_flight = 2048;
        std::size_t bounce_chunk_bytes = std::size_t{256} << 10;
        std::uint32_t bounce_chunks = 16;
        bool flush_delivery = false;      // put delivery "flush" (needs an ordered endpoint)
        std::uint32_t flush_every = 256;  // unconfirmed injected puts to one PE before a flush is posted anyway
        std::size_t coalesce_bytes = 4096;
        // Work outstanding and nothing completing or posted this long: the
        // proxy says once on stderr which operation is stuck and where (0: never).
        std::int64_t stall_report_ns = std::int64_t{10} * 1000000000;
    };

    fabric_backend(const fi_info* chosen, const setup& s) : s_(s) {
        try {
            open(chosen, s);
        } catch (...) {
            close();
            throw;
        }
    }

    fabric_backend(const fabric_backend&) = delete;
    fabric_backend& operator=(const fabric_backend&) = delete;
    ~fabric_backend() { close(); }

private:
    void open(const fi_info* chosen, const setup& s) {
        info_.reset(fi_dupinfo(chosen));
        mr_mode_ = info_->domain_attr->mr_mode;
        ordered_ = has_order(info_.get(), full_order);
        inject_size_ = std::min<std::size_t>(info_->tx_attr->inject_size, max_gather);
        if (s.flush_delivery && (!has_rma_order(info_.get()) || inject_size_ < 8))
            fail(errc::invalid_argument, s.pe, "libfabric_domain", "put delivery \"flush\" needs an ordered endpoint");
        gather_.resize(std::max<std::size_t>(inject_size_, 64));
        check(fi_fabric(info_->fabric_attr, &fabric_, nullptr), s.pe, "fi_fabric", "opening the fabric");
        check(fi_domain(fabric_, info_.get(), &domain_, nullptr), s.pe, "fi_domain", "opening the domain");
        fi_cq_attr cq_attr{};
        cq_attr.format = FI_CQ_FORMAT_CONTEXT;
        cq_attr.size = s.max_in_flight * 2;
        check(fi_cq_open(domain_, &cq_attr, &cq_, nullptr), s.pe, "fi_cq_open", "opening the completion queue");
        fi_av_attr av_attr{};
        av_attr.type = FI_AV_TABLE;
        av_attr.count = std::size_t(s.n_pes);
        check(fi_av_open(domain_, &av_attr, &av_, nullptr), s.pe, "fi_av_open", "opening the address vector");
        check(fi_endpoint(domain_, info_.get(), &ep_, nullptr), s.pe, "fi_endpoint", "opening the RDM endpoint");
        check(fi_ep_bind(ep_, &av_->fid, 0), s.pe, "fi_ep_bind", "binding the address vector");
        check(fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV), s.pe, "fi_ep_bind", "binding the completion queue");
        check(fi_enable(ep_), s.pe, "fi_enable", "enabling the endpoint");

        heap_mr_ = register_memory(s.heap_base, s.heap_bytes,
                                   FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, 1, s.heap_is_gpu, "the symmetric heap");
        heap_desc_ = fi_mr_desc(heap_mr_);

        // Scratch: 64 bytes per operation record (atomic operands and
        // results, small staged payloads), then the bounce chunks.
        records_.resize(s.max_in_flight);
        scratch_bytes_ = std::size_t(s.max_in_flight) * 64 + std::size_t(s.bounce_chunks) * s.bounce_chunk_bytes;
        if (s.gpu_producers) {
            if (cudaHostAlloc(reinterpret_cast<void**>(&scratch_), scratch_bytes_, cudaHostAllocPortable) != cudaSuccess)
                fail(errc::cuda, s.pe, "libfabric_domain", "cudaHostAlloc of the staging buffers failed");
        } else {
            scratch_ = static_cast<std::byte*>(std::aligned_alloc(4096, (scratch_bytes_ + 4095) / 4096 * 4096));
        }
        std::memset(scratch_, 0, scratch_bytes_);
        scratch_mr_ = register_memory(scratch_, scratch_bytes_, FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE,
                                      2, false, "the staging buffers");
        scratch_desc_ = fi_mr_desc(scratch_mr_);
        for (std::uint32_t i = 0; i < s.max_in_flight; ++i) {
            records_[i].index = i;
            free_records_.push_back(s.max_in_flight - 1 - i);
        }
        for (std::uint32_t i = 0; i < s.bounce_chunks; ++i) free_bounce_.push_back(i);

        std::memset(&card_, 0, sizeof(card_));
        std::size_t len = sizeof(card_.name);
        check(fi_getname(&ep_->fid, card_.name, &len), s.pe, "fi_getname", "reading the endpoint address");
        card_.name_len = len;
        card_.heap_base = reinterpret_cast<std::uint64_t>(s.heap_base);
        card_.heap_key = fi_mr_key(heap_mr_);
        card_.pe = s.pe;
    }

    void close() {
        if (ep_) fi_close(&ep_->fid);
        for (auto& [table, entry] : windows_)
            if (entry.mr) fi_close(&entry.mr->fid);
        windows_.clear();
        if (scratch_mr_) fi_close(&scratch_mr_->fid);
        if (heap_mr_) fi_close(&heap_mr_->fid);
        if (av_) fi_close(&av_->fid);
        if (cq_) fi_close(&cq_->fid);
        if (domain_) fi_close(&domain_->fid);
        if (fabric_) fi_close(&fabric_->fid);
        if (scratch_) {
            if (s_.gpu_producers) cudaFreeHost(scratch_);
            else std::free(scratch_);
        }
        if (stream_) cudaStreamDestroy(stream_);
        stream_ = nullptr;
        ep_ = nullptr, scratch_mr_ = heap_mr_ = nullptr, av_ = nullptr, cq_ = nullptr, domain_ = nullptr, fabric_ = nullptr;
        scratch_ = nullptr;
    }

public:
    const address_card& card() const { return card_; }

    // Inserts every PE's address (cards indexed by world PE).
    void connect(const std::vector<address_card>& cards) {
        peers_.assign(cards.size(), peer{});
        for (std::size_t pe = 0; pe < cards.size(); ++pe) {
            fi_addr_t addr = FI_ADDR_NOTAVAIL;
            const int rc = fi_av_insert(av_, cards[pe].name, 1, &addr, 0, nullptr);
            if (rc != 1)
                fail(errc::transport_unavailable, s_.pe, "libfabric_domain",
                     "fi_av_insert of PE " + std::to_string(pe) + "'s address failed (" + describe("fi_av_insert", rc) +
                         "): peer unreachable with provider " + provider());
            peers_[pe].addr = addr;
            peers_[pe].base = (mr_mode_ & FI_MR_VIRT_ADDR) ? cards[pe].heap_base : 0;
            peers_[pe].key = cards[pe].heap_key;
        }
    }

    std::string provider() const { return info_->fabric_attr->prov_name; }
    std::string domain_name() const { return info_->domain_attr->name ? info_->domain_attr->name : ""; }
    std::uint64_t mr_mode() const { return mr_mode_; }
    std::size_t inject_size() const { return inject_size_; }
    const char* put_delivery() const { return s_.flush_delivery ? "flush" : "complete"; }
    // The heap is GPU memory registered with FI_HMEM (FI_HMEM_CUDA): the provider reaches it directly.
    bool heap_hmem() const { return s_.heap_is_gpu; }
    // GPU bytes the proxy has copied to or from pinned host memory so far
    // (staging of GPU buffers outside the heap); any thread may ask.
    std::uint64_t staged_gpu_bytes() const { return staged_gpu_bytes_.load(std::memory_order_relaxed); }

    // Writes and atomics to one PE are processed in the order posted
    // (FI_ORDER_RAW|FI_ORDER_WAW granted, as shm does): the proxy may post put_signal's
    // signal right behind its data instead of after the data's completion.
    bool ordered() const { return ordered_; }

private:
    // Where a transfer lands at its PE: the heap's or a window's key, the address that offset 0 is posted as, the
    // bytes the remote range must lie in, and the window (its table offset; proxy::no_window for the heap).
    struct target {
        std::uint64_t base, key, limit, window;
    };
    // A peer's buffer of a window, as connect_window stored it.
    struct remote_buffer {
        std::uint64_t base = 0, key = 0, bytes = 0;
    };
    struct window_entry {
        fid_mr* mr = nullptr;  // this PE's buffer's registration
        std::vector<remote_buffer> peers;
    };
    // Keys this backend asks for (providers without FI_MR_PROV_KEY use them): heap 1, staging 2, windows from here
    // plus their world serial (unique in the process, so in each of its domains).
    static constexpr std::uint64_t window_key_base = 0x10000;

public:
    // --- proxy::backend ------------------------------------------------------

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
                     "cudaSetDevice(" + std::to_string(s_.cuda_device) + ") on the proxy thread: " + cudaGetErrorString(rc));
        }
        if (s_.heap_is_gpu) register_stack();
    }

    std::uint32_t put(std::uint64_t token, int pe, std::uint64_t remote, const void* src, std::size_t bytes, bool device) {
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
        return atomic(token, pe, remote, op == signal_op::set ? amo::set : amo::fetch_add, proxy::value_kind::u64, value, 0,
                      nullptr);
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
        return queue_atomic(token, pe, window_target(kind::atomic, pe, window), remote, op, k, operand, compare, result);
    }

    // Registers this PE's buffer of window `window` (table offset; `id` its world serial) with the domain: FI_HMEM
    // with iface CUDA and the buffer's device for GPU memory (the endpoint must have FI_HMEM), plain for host
    // memory. Returns what the peers need (connect_window). Throws pgas::error naming register_window and the PE.
    window_card register_window(std::uint64_t window, std::uint32_t id, void* buffer, std::uint64_t bytes) {
        const bool gpu = is_gpu_memory(buffer);
        if (gpu && !(info_->caps & FI_HMEM))
            fail(errc::transport_unavailable, s_.pe, "register_window",
                 "the buffer (" + std::to_string(bytes) + " bytes) is GPU memory, and libfabric provider " + provider() +
                     " was opened without FI_HMEM, so fi_mr_regattr cannot register it: a window of GPU memory over "
                     "the libfabric proxy needs FI_HMEM (a provider built with CUDA, chosen for a GPU heap); register "
                     "host memory, or use a GPU heap on an FI_HMEM provider");
        const std::uint64_t key = window_key_base + id;
        fid_mr* mr = register_memory(buffer, bytes, FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, key, gpu,
                                     "a window's buffer", "register_window");
        window_card card{};
        card.address = reinterpret_cast<std::uint64_t>(buffer);
        card.key = fi_mr_key(mr);
        card.bytes = bytes;
        card.pe = s_.pe;
        card.ok = 1;
        const std::lock_guard<std::mutex> hold(windows_lock_);
        windows_[window].mr = mr;
        return card;
    }

    // Takes every PE's card of window `window` (indexed by world PE): from now on the proxy resolves it. Addresses
    // as the heap's (connect): the buffer's virtual address under FI_MR_VIRT_ADDR, else offsets from 0.
    void connect_window(std::uint64_t window, const std::vector<window_card>& cards) {
        std::vector<remote_buffer> peers(cards.size());
        for (std::size_t pe = 0; pe < cards.size(); ++pe)
            peers[pe] = {(mr_mode_ & FI_MR_VIRT_ADDR) ? cards[pe].address : 0, cards[pe].key, cards[pe].bytes};
        const std::lock_guard<std::mutex> hold(windows_lock_);
        windows_[window].peers = std::move(peers);
    }

    // Deregisters this PE's buffer of window `window` (fi_close) and forgets the peers' keys; the caller made
    // sure no command names it any more (libfabric_domain: its proxies idle, then a barrier).
    void release_window(std::uint64_t window) {
        fid_mr* mr = nullptr;
        {
            const std::lock_guard<std::mutex> hold(windows_lock_);
            auto at = windows_.find(window);
            if (at == windows_.end()) return;
            mr = at->second.mr;
            windows_.erase(at);
        }
        if (mr) fi_close(&mr->fid);
    }

    // Windows registered with this PE's domain and not yet released.
    std::size_t live_windows() const {
        const std::lock_guard<std::mutex> hold(windows_lock_);
        return windows_.size();
    }

private:
    std::uint32_t queue_atomic(std::uint64_t token, int pe, const target& t, std::uint64_t remote, amo op,
                               proxy::value_kind k, std::uint64_t operand, std::uint64_t compare, void* result) {
        check_range(kind::atomic, pe, t, remote, proxy::width_of(k));
        work w{};
        w.token = token;
        w.what = kind::atomic;
        w.pe = pe;
        w.remote = remote;
        w.addr = t.base + remote;
        w.key = t.key;
        w.window = t.window;
        w.local = result;
        w.bytes = proxy::width_of(k);
        w.amo_op = op;
        w.type = datatype(k);
        w.operand = operand;
        w.compare = compare;
        queue_.push_back(w);
        return 1;
    }

public:
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

    // Makes every operation posted so far complete without further help:
    // posts what is queued, then a flush to each PE with injected puts no
    // posted operation confirms yet. The proxy calls it when it waits for
    // completions: `waited_on` when a fence or signal stands behind
    // the queued work (a producer waits: fewest round trips), else for an
    // idle ring with work outstanding (credits, blocking puts); then a PE
    // with a flush in flight waits for it first, so that puts trickling in
    // (one GPU thread's, each a PCIe round trip apart) cost one flush per
    // round trip, not one each.
    bool flush(bool waited_on) {
        waited_on_ = waited_on;
        bool any = pump();
        waited_on_ = false;
        if (!s_.flush_delivery) return any;
        std::size_t keep = 0;
        for (std::size_t i = 0; i < dirty_.size(); ++i) {
            const int pe = dirty_[i];
            peer& p = peers_[std::size_t(pe)];
            if (p.injected > p.covered && ((!waited_on && p.flushes > 0) || !post_flush(pe))) {
                dirty_[keep++] = pe;  // a flush to wait for, no record, or the provider's queue full: next time
                continue;
            }
            any |= p.injected == p.covered;
            p.dirty = p.injected > p.covered;
            if (p.dirty) dirty_[keep++] = pe;
        }
        dirty_.resize(keep);
        return any;
    }

    // --- raw access for benchmarks comparing the proxy with the provider ------

    fid_ep* endpoint() const { return ep_; }
    fid_cq* completion_queue() const { return cq_; }
    fi_addr_t address(int pe) const { return peers_[std::size_t(pe)].addr; }
    std::uint64_t remote_address(int pe, std::uint64_t offset) const { return peers_[std::size_t(pe)].base + offset; }
    std::uint64_t remote_key(int pe) const { return peers_[std::size_t(pe)].key; }
    void* heap_descriptor() const { return heap_desc_; }

private:
    enum class kind : std::uint8_t { write, read, atomic, flush };
    static constexpr std::size_t max_gather = std::size_t{64} << 10;

    struct work {
        std::uint64_t token;
        kind what;
        bool device;
        amo amo_op;
        fi_datatype type;
        int pe;
        std::uint64_t remote;  // heap offset, or byte offset into `window` (messages)
        void* local;  // write source / read destination / atomic result (nullptr: none)
        std::size_t bytes;
        std::uint64_t operand, compare;
        std::uint64_t addr, key;  // as posted: the remote address and key (heap_target / window_target)
        std::uint64_t window;     // proxy::no_window for the heap
    };

    // One posted fabric operation; the fi_context2 must come first.
    struct record {
        fi_context2 context;
        std::uint64_t token = 0;
        std::uint32_t tokens = 1;    // merged writes: commands token .. token + tokens - 1 (flush: 0)
        std::uint64_t confirms = 0;  // flush delivery: injected puts to `pe` this op confirms (peer::injected then)
        std::int64_t posted_ns = 0;  // steady clock, for the stall report
        std::uint32_t index = 0;
        int bounce = -1;          // bounce chunk to return (-1: none)
        void* copy_to = nullptr;  // read/atomic result: where the staged bytes go on completion
        const void* copy_from = nullptr;
        std::size_t bytes = 0;
        bool device_copy = false;
        kind what = kind::write;
        int pe = 0;
    };

    // Injected puts waiting for confirmation: `count` commands from `token` on.
    struct injected_put {
        std::uint64_t seq, token;
        std::uint32_t count;
    };

    struct peer {
        fi_addr_t addr = FI_ADDR_NOTAVAIL;
        std::uint64_t base = 0;
        std::uint64_t key = 0;
        // flush delivery: injected writes posted (a sequence), the highest of
        // them a posted operation confirms, those confirmed, and the waiting ones
        std::uint64_t injected = 0, covered = 0, confirmed = 0;
        std::uint32_t flushes = 0;  // flushes in flight
        std::deque<injected_put> waiting;
        bool dirty = false;  // in dirty_
    };

    fid_mr* register_memory(void* base, std::size_t bytes, std::uint64_t access, std::uint64_t key, bool gpu,
                            const char* what, const char* call = "libfabric_domain") {
        iovec iov{base, bytes};
        fi_mr_attr attr{};
        attr.mr_iov = &iov;
        attr.iov_count = 1;
        attr.access = access;
        attr.requested_key = key;
        attr.iface = FI_HMEM_SYSTEM;
        if (gpu) {
            cudaPointerAttributes pointer{};
            if (cudaPointerGetAttributes(&pointer, base) != cudaSuccess)
                fail(errc::cuda, s_.pe, call, std::string("cannot query the GPU of ") + what);
            attr.iface = FI_HMEM_CUDA;
            attr.device.cuda = pointer.device;
        }
        fid_mr* mr = nullptr;
        const int rc = fi_mr_regattr(domain_, &attr, 0, &mr);
        if (rc != 0) {
            std::string detail = std::string("registering ") + what + " (" + std::to_string(bytes) + " bytes";
            detail += gpu ? ", CUDA memory" : "";
            detail += ") with provider " + provider() + ": " + describe("fi_mr_regattr", rc);
            if (gpu)
                detail += "; this provider cannot register GPU memory (no FI_HMEM for CUDA): the remote side of "
                          "the proxy needs an FI_HMEM provider for a GPU heap";
            fail(errc::transport_unavailable, s_.pe, call, detail);
        }
        if (mr_mode_ & FI_MR_ENDPOINT) {
            check(fi_mr_bind(mr, &ep_->fid, 0), s_.pe, "fi_mr_bind", "binding a memory region to the endpoint");
            check(fi_mr_enable(mr), s_.pe, "fi_mr_enable", "enabling a memory region");
        }
        return mr;
    }

    static fi_datatype datatype(proxy::value_kind k) {
        switch (k) {
            case proxy::value_kind::u32: return FI_UINT32;
            case proxy::value_kind::u64: return FI_UINT64;
            case proxy::value_kind::i32: return FI_INT32;
            case proxy::value_kind::i64: return FI_INT64;
            case proxy::value_kind::f32: return FI_FLOAT;
            case proxy::value_kind::f64: return FI_DOUBLE;
        }
        return FI_UINT64;
    }

    // Every remote range must lie inside the (symmetric) heap, or inside the
    // target PE's buffer of a window, checked before anything is posted:
    // providers report nothing for a bad one. shm drops
    // an injected write at the target, and a command whose key or range the
    // target cannot verify is dropped there with only a log line
    // (prov/shm/src/smr_progress.c, smr_progress_cmd_rma: ofi_mr_map_verify
    // failing skips the response), so the initiator would wait forever.
    void check_range(kind what, int pe, const target& t, std::uint64_t remote, std::size_t bytes) {
        if (remote <= t.limit && bytes <= t.limit - remote) return;
        queue_.clear();
        if (t.window == proxy::no_window)
            fail(errc::invalid_argument, s_.pe, "libfabric proxy",
                 std::string(op_name(what)) + " to PE " + std::to_string(pe) + " (" + std::to_string(bytes) +
                     " bytes at heap offset " + std::to_string(remote) + ") is outside the symmetric heap (" +
                     std::to_string(t.limit) + " bytes)");
        fail(errc::invalid_argument, s_.pe, "libfabric proxy",
             std::string(op_name(what)) + " to PE " + std::to_string(pe) + " (" + std::to_string(bytes) +
                 " bytes at byte " + std::to_string(remote) + " of window " + std::to_string(t.window) +
                 ") is outside PE " + std::to_string(pe) + "'s buffer (" + std::to_string(t.limit) + " bytes)");
    }

    target heap_target(int pe) const {
        const peer& p = peers_[std::size_t(pe)];
        return {p.base, p.key, s_.heap_bytes, proxy::no_window};
    }

    // PE pe's buffer of window `window`, or a failure naming it: a window this domain never connected (registered
    // before the domain existed is impossible: the domain registers those at its construction) or one released.
    target window_target(kind what, int pe, std::uint64_t window) {
        {
            const std::lock_guard<std::mutex> hold(windows_lock_);
            auto at = windows_.find(window);
            if (at != windows_.end() && std::size_t(pe) < at->second.peers.size()) {
                const remote_buffer& b = at->second.peers[std::size_t(pe)];
                return {b.base, b.key, b.bytes, window};
            }
        }
        queue_.clear();
        fail(errc::invalid_argument, s_.pe, "libfabric proxy",
             std::string(op_name(what)) + " to PE " + std::to_string(pe) + " names window " + std::to_string(window) +
                 ", which is not registered with this libfabric domain (released, or not a window)");
    }

    static bool is_gpu_memory(const void* p) {
        cudaPointerAttributes a{};
        if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
            (void)cudaGetLastError();  // no GPU, or memory CUDA does not know: host memory
            return false;
        }
        return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
    }

    bool in_heap(const void* p, std::size_t bytes) const {
        auto* b = static_cast<const std::byte*>(p);
        return b >= s_.heap_base && b + bytes <= s_.heap_base + s_.heap_bytes;
    }

    // Queues one transfer as chunks; returns how many completions it makes.
    std::uint32_t split(std::uint64_t token, kind what, int pe, const target& t, std::uint64_t remote, void* local,
                        std::size_t bytes, bool device) {
        if (bytes == 0) return 0;
        check_range(what, pe, t, remote, bytes);
        const bool staged = needs_staging(local, bytes, device);
        const std::size_t limit = staged ? s_.bounce_chunk_bytes : max_message();
        std::uint32_t chunks = 0;
        for (std::size_t done = 0; done < bytes; done += limit, ++chunks) {
            work w{};
            w.token = token;
            w.what = what;
            w.device = device;
            w.pe = pe;
            w.remote = remote + done;
            w.addr = t.base + remote + done;
            w.key = t.key;
            w.window = t.window;
            w.local = static_cast<std::byte*>(local) + done;
            w.bytes = bytes - done < limit ? bytes - done : limit;
            queue_.push_back(w);
        }
        return chunks;
    }

    std::size_t max_message() const {
        const std::size_t provider_max = info_->ep_attr->max_msg_size;
        const std::size_t cap = std::size_t{1} << 30;
        return provider_max < cap ? provider_max : cap;
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
                fail(errc::cuda, s_.pe, "libfabric proxy", std::string("creating the staging stream: ") + cudaGetErrorString(rc));
            }
        }
        staged_gpu_bytes_.fetch_add(bytes, std::memory_order_relaxed);
        cudaError_t rc = cudaMemcpyAsync(dst, src, bytes, direction, stream_);
        if (rc == cudaSuccess) rc = cudaStreamSynchronize(stream_);
        if (rc != cudaSuccess)
            fail(errc::cuda, s_.pe, "libfabric proxy",
                 std::string("staging ") + std::to_string(bytes) + " bytes through pinned memory: " + cudaGetErrorString(rc));
    }

    // Posts queued work until the queue is empty or the provider or our
    // records/bounce buffers are exhausted (then completions free them).
    bool pump() {
        bool any = false;
        while (!queue_.empty()) {
            const bool posted = queue_.front().what == kind::write ? post_write() : post_other();
            if (!posted) break;
            any = true;
        }
        return any;
    }

    // A write that may take part in a merge: host memory, smaller than the limit.
    bool mergeable(const work& w, std::size_t limit) const {
        return w.what == kind::write && !w.device && w.bytes < limit;
    }

    // How many queued writes from the front leave as one (and their bytes):
    // consecutive commands (one completion each) to one PE whose remote ranges
    // follow each other.
    std::size_t merge_run(std::size_t limit, std::size_t& total) const {
        const work& w = queue_.front();
        total = w.bytes;
        if (s_.coalesce_bytes == 0 || !mergeable(w, limit)) return 1;
        std::size_t n = 1;
        for (; n < queue_.size(); ++n) {
            const work& x = queue_[n];
            if (!mergeable(x, limit) || x.pe != w.pe || x.token != w.token + n || x.key != w.key || x.addr != w.addr + total ||
                total + x.bytes > limit)
                break;
            total += x.bytes;
        }
        return n;
    }

    void gather(std::byte* to, std::size_t n) const {
        for (std::size_t i = 0; i < n; ++i) {
            std::memcpy(to, queue_[i].local, queue_[i].bytes);
            to += queue_[i].bytes;
        }
    }

    // Posts the write at the front (merged with those that follow it when it
    // can): injected under flush delivery when it fits, else with a record.
    bool post_write() {
        const work& w = queue_.front();
        peer& p = peers_[std::size_t(w.pe)];
        std::size_t total = 0;
        if (s_.flush_delivery) {
            const std::size_t n = merge_run(std::min(s_.coalesce_bytes, inject_size_), total);
            // The last write before a quiet (or fence, signal) the proxy has
            // already seen goes delivery-complete: that quiet then waits one
            // round trip, not an inject plus a flush (shm: 1.2 vs 2.1 us raw),
            // and by write ordering its completion confirms the puts injected
            // before it. Not for an idle ring: a stream that the proxy keeps
            // up with would stall on shm's delivery-complete protocol, which
            // holds further sends to that PE until it completes.
            const bool last_before_wait = waited_on_ && queue_.size() == n;
            if (total <= inject_size_ && !last_before_wait) return inject(n, total);
        }
        if (free_records_.empty()) return false;
        record& r = records_[free_records_.back()];
        std::byte* scratch = scratch_ + std::size_t(r.index) * 64;
        start_record(r, w);
        std::size_t n = merge_run(std::min(s_.coalesce_bytes, s_.bounce_chunk_bytes), total);
        if (n > 1 && free_bounce_.empty()) n = 1, total = w.bytes;
        void* buffer = w.local;
        void* desc = nullptr;
        if (n > 1) {
            r.bounce = free_bounce_.back();
            buffer = bounce(r.bounce);
            desc = scratch_desc_;
            gather(static_cast<std::byte*>(buffer), n);
            r.tokens = std::uint32_t(n);
            r.bytes = total;
        } else if (!stage(w, r, scratch, buffer, desc)) {
            return false;
        }
        const ssize_t rc = fi_write(ep_, buffer, total, desc, p.addr, w.addr, w.key, &r.context);
        if (rc == -FI_EAGAIN) return false;  // the provider's queue is full: completions first
        if (rc != 0) fail_post(w, rc);
        commit(r, n);
        return true;
    }

    // Flush delivery: fi_inject_write of `n` merged writes (`total` bytes;
    // each was range-checked when queued, so the merged range is inside too).
    bool inject(std::size_t n, std::size_t total) {
        const work& w = queue_.front();
        peer& p = peers_[std::size_t(w.pe)];
        const void* buffer = w.local;
        if (n > 1) {
            gather(gather_.data(), n);
            buffer = gather_.data();
        } else if (!in_heap(w.local, w.bytes) && w.device) {
            copy(gather_.data(), w.local, w.bytes, true, cudaMemcpyDeviceToHost);  // inject copies it out again
            buffer = gather_.data();
        }
        const ssize_t rc = fi_inject_write(ep_, buffer, total, p.addr, w.addr, w.key);
        if (rc == -FI_EAGAIN) return false;
        if (rc != 0) fail_post(w, rc);
        p.waiting.push_back({++p.injected, w.token, std::uint32_t(n)});
        if (!p.dirty) p.dirty = true, dirty_.push_back(w.pe);
        const int pe = w.pe;
        for (std::size_t i = 0; i < n; ++i) queue_.pop_front();
        if (p.injected - p.covered >= s_.flush_every) post_flush(pe);  // else the next flush()
        return true;
    }

    // Reads and atomics (one record each).
    bool post_other() {
        if (free_records_.empty()) return false;
        const work& w = queue_.front();
        record& r = records_[free_records_.back()];
        std::byte* scratch = scratch_ + std::size_t(r.index) * 64;
        start_record(r, w);
        void* buffer = w.local;
        void* desc = nullptr;
        if (w.what != kind::atomic && !stage(w, r, scratch, buffer, desc)) return false;
        const ssize_t rc = post(w, r, buffer, desc, scratch);
        if (rc == -FI_EAGAIN) return false;
        if (rc != 0) fail_post(w, rc);
        commit(r, 1);
        return true;
    }

    void start_record(record& r, const work& w) {
        r.token = w.token;
        r.tokens = 1;
        r.what = w.what;
        r.pe = w.pe;
        r.bounce = -1;
        r.copy_to = nullptr;
        r.bytes = w.bytes;
        r.device_copy = false;
    }

    // Where a read/write's local bytes go through: the heap (registered),
    // scratch or a bounce chunk (staging), or the buffer itself. False when a
    // bounce chunk is needed and none is free.
    bool stage(const work& w, record& r, std::byte* scratch, void*& buffer, void*& desc) {
        if (in_heap(w.local, w.bytes)) {
            desc = heap_desc_;
            return true;
        }
        if (!needs_staging(w.local, w.bytes, w.device)) return true;
        if (w.bytes <= 64 && !w.device) {
            buffer = scratch;
        } else {
            if (free_bounce_.empty()) return false;
            r.bounce = free_bounce_.back();
            buffer = bounce(r.bounce);
        }
        desc = scratch_desc_;
        if (w.what == kind::write) {
            copy(buffer, w.local, w.bytes, w.device, cudaMemcpyDeviceToHost);
        } else {
            r.copy_to = w.local;
            r.copy_from = buffer;
            r.device_copy = w.device;
        }
        return true;
    }

    // A posted record: it confirms every put injected to its PE before it
    // (reads and writes by RMA ordering; atomics only when they are ordered
    // with RMA too).
    void commit(record& r, std::size_t n) {
        peer& p = peers_[std::size_t(r.pe)];
        r.posted_ns = clock_ns();
        r.confirms = 0;
        if (r.what != kind::atomic || ordered_) {
            r.confirms = p.injected;
            p.covered = std::max(p.covered, p.injected);
        }
        free_records_.pop_back();
        if (r.bounce >= 0) free_bounce_.pop_back();
        for (std::size_t i = 0; i < n; ++i) queue_.pop_front();
    }

    // An 8-byte FI_ATOMIC_READ (or fi_read) of `pe`'s heap (its flush word, which nobody writes: heap_layout):
    // completes after every write posted to `pe` before it was processed there. False: try again later.
    bool post_flush(int pe) {
        if (free_records_.empty()) return false;
        peer& p = peers_[std::size_t(pe)];
        record& r = records_[free_records_.back()];
        std::byte* scratch = scratch_ + std::size_t(r.index) * 64;
        r.token = 0;
        r.tokens = 0;
        r.what = kind::flush;
        r.pe = pe;
        r.bounce = -1;
        r.copy_to = nullptr;
        r.bytes = 8;
        r.device_copy = false;
        // shm: the atomic is a command answered from the target's queue; its
        // fi_read would add a process_vm_writev at the target.
        const std::uint64_t flush_word = p.base + pgas::detail::heap_layout::flush_word_offset;
        const ssize_t rc = ordered_ ? fi_fetch_atomic(ep_, scratch, 1, scratch_desc_, scratch + 16, scratch_desc_, p.addr,
                                                      flush_word, p.key, FI_UINT64, FI_ATOMIC_READ, &r.context)
                                    : fi_read(ep_, scratch + 16, 8, scratch_desc_, p.addr, flush_word, p.key, &r.context);
        if (rc == -FI_EAGAIN) return false;
        if (rc != 0) {
            work w{};
            w.what = kind::flush;
            w.window = proxy::no_window;
            w.pe = pe;
            w.bytes = 8;
            fail_post(w, rc);
        }
        r.confirms = p.injected;
        r.posted_ns = clock_ns();
        p.covered = p.injected;
        ++p.flushes;
        free_records_.pop_back();
        return true;
    }

    [[noreturn]] void fail_post(work w, ssize_t rc) {  // a copy: w may live in queue_
        queue_.clear();  // the proxy is failing: nothing queued will be posted (no retry storm)
        fail(errc::system, s_.pe, "libfabric proxy",
             std::string(op_name(w.what)) + " to PE " + std::to_string(w.pe) + " (" + std::to_string(w.bytes) +
                 " bytes at " + where(w) + ") with provider " + provider() + ": " + describe(op_name(w.what), long(rc)));
    }

    static std::string where(const work& w) {
        return w.window == proxy::no_window
                   ? "heap offset " + std::to_string(w.remote)
                   : "byte " + std::to_string(w.remote) + " of window " + std::to_string(w.window);
    }

    static const char* op_name(kind k) {
        return k == kind::write  ? "fi_write"
               : k == kind::read ? "fi_read"
               : k == kind::flush ? "flush of injected puts"
                                  : "fi_atomic";
    }

    ssize_t post(const work& w, record& r, void* buffer, void* desc, std::byte* scratch) {
        const fi_addr_t to = peers_[std::size_t(w.pe)].addr;
        const std::uint64_t addr = w.addr, key = w.key;
        void* context = &r.context;
        switch (w.what) {
            case kind::write: return fi_write(ep_, buffer, w.bytes, desc, to, addr, key, context);
            case kind::read: return fi_read(ep_, buffer, w.bytes, desc, to, addr, key, context);
            case kind::atomic: break;
            case kind::flush: return -FI_EINVAL;  // never queued (post_flush)
        }
        // Atomics: operand at scratch[0], compare at [8], result at [16].
        std::memcpy(scratch, &w.operand, 8);
        std::memcpy(scratch + 8, &w.compare, 8);
        void* result = scratch + 16;
        if (w.local) {
            r.copy_to = w.local;
            r.copy_from = result;
            r.device_copy = false;
        }
        // Non-fetching updates (set, signal) go out as fetching ones whose
        // result is dropped: a fetch cannot complete before the target
        // applied it, while shm (1.17) completes fi_atomic before reading the
        // operand (measured: a reused operand buffer changed the value
        // written), and quiet needs the update applied.
        switch (w.amo_op) {
            case amo::set:
                return fi_fetch_atomic(ep_, scratch, 1, scratch_desc_, result, scratch_desc_, to, addr, key, w.type,
                                       FI_ATOMIC_WRITE, context);
            case amo::fetch_add:
                return fi_fetch_atomic(ep_, scratch, 1, scratch_desc_, result, scratch_desc_, to, addr, key, w.type,
                                       FI_SUM, context);
            case amo::compare_swap:
                return fi_compare_atomic(ep_, scratch, 1, scratch_desc_, scratch + 8, scratch_desc_, result, scratch_desc_,
                                         to, addr, key, w.type, FI_CSWAP, context);
            default: break;
        }
        const fi_op op = w.amo_op == amo::fetch   ? FI_ATOMIC_READ
                         : w.amo_op == amo::swap  ? FI_ATOMIC_WRITE
                         : w.amo_op == amo::fetch_and ? FI_BAND
                         : w.amo_op == amo::fetch_or  ? FI_BOR
                                                      : FI_BXOR;
        return fi_fetch_atomic(ep_, scratch, 1, scratch_desc_, result, scratch_desc_, to, addr, key, w.type, op,
                               context);
    }

    std::byte* bounce(int chunk) const {
        return scratch_ + std::size_t(s_.max_in_flight) * 64 + std::size_t(chunk) * s_.bounce_chunk_bytes;
    }

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
             what + " failed with provider " + provider() + ": " + fi_strerror(err.err) + " (" + (text ? text : "") + ")");
    }

    static std::int64_t clock_ns() {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
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
            text += ", the oldest " + std::string(op_name(oldest->what)) + " to PE " + std::to_string(oldest->pe) + " (" +
                    std::to_string(oldest->bytes) + " bytes), posted " +
                    std::to_string((now - oldest->posted_ns) / 1000000) + " ms ago";
        if (!queue_.empty()) {
            const work& w = queue_.front();
            text += "; " + std::to_string(queue_.size()) + " queued, the first " + op_name(w.what) + " to PE " +
                    std::to_string(w.pe) + " (" + std::to_string(w.bytes) + " bytes at " + where(w) + ") not accepted by the provider (-FI_EAGAIN) or waiting for a free " +
                    "record or bounce buffer";
        }
        text += (s_.heap_is_gpu ? "; FI_HMEM: the target's provider copies with CUDA on its proxy thread "
                                  "(FI_LOG_LEVEL=warn shows its side)"
                                : "");
        std::fprintf(stderr, "%s\n", text.c_str());
    }

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
                 "cudaHostRegister of the proxy thread's stack (" + std::to_string(bytes) + " bytes): " +
                     cudaGetErrorString(reg) +
                     "; without it libfabric's shm would cudaDeviceSynchronize on every atomic into this GPU heap "
                     "(a hang while kernels wait)");
        }
        stack_base_ = base;
        stack_registered_ = true;
    }

    setup s_;
    info_ptr info_;
    std::uint64_t mr_mode_ = 0;
    fid_fabric* fabric_ = nullptr;
    fid_domain* domain_ = nullptr;
    fid_cq* cq_ = nullptr;
    fid_av* av_ = nullptr;
    fid_ep* ep_ = nullptr;
    fid_mr* heap_mr_ = nullptr;
    fid_mr* scratch_mr_ = nullptr;
    void* heap_desc_ = nullptr;
    void* scratch_desc_ = nullptr;
    std::byte* scratch_ = nullptr;
    std::size_t scratch_bytes_ = 0;
    std::vector<record> records_;
    std::vector<std::uint32_t> free_records_;
    std::vector<int> free_bounce_;
    std::deque<work> queue_;
    std::vector<peer> peers_;
    std::vector<int> dirty_;          // PEs with injected puts no posted operation confirms yet
    std::vector<std::byte> gather_;   // merged or staged bytes of one injected write
    std::size_t inject_size_ = 0;
    bool ordered_ = false;
    bool waited_on_ = false;  // inside flush(true)
    address_card card_{};
    cudaStream_t stream_ = nullptr;  // staging copies (created on the proxy thread)
    std::int64_t stalled_since_ns_ = -1;  // watch_for_stall: first idle poll of this stall (-1: none)
    bool stall_reported_ = false;
    std::uint32_t idle_polls_ = 0;
    void* stack_base_ = nullptr;     // the proxy thread's stack, registered with CUDA (GPU heap)
    bool stack_registered_ = false;
    std::atomic<std::uint64_t> staged_gpu_bytes_{0};
    // Registered windows by table offset: written by the host thread that registers or releases one, read by the
    // proxy thread for each window command (an uncontended lock: windows change only in collective calls).
    mutable std::mutex windows_lock_;
    std::unordered_map<std::uint64_t, window_entry> windows_;
};

}  // namespace ofi
PGAS_NAMESPACE_END
