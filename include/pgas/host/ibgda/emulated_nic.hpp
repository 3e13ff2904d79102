// An emulated mlx5 NIC: a host thread that executes IBGDA send queues on host memory and writes CQEs (tests, CI).
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/transport/ibgda/byte_order.hpp>
#include <pgas/transport/ibgda/cqe.hpp>
#include <pgas/transport/ibgda/queue.hpp>
#include <pgas/transport/ibgda/segments.hpp>
#include <pgas/transport/ibgda/traits.hpp>
#include <pgas/transport/ibgda/wqe.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

PGAS_NAMESPACE_BEGIN

// Plays the NIC for the send queues attached to it, as the mlx5 hardware
// would: it learns of new WQEs only through the doorbell record's send
// counter, checks that each announced WQE carries its expected index and QP
// number (a record moved before its WQE was written shows up here), validates
// lkeys/rkeys and bounds against the registered regions, executes RDMA
// WRITE/READ, standard and masked atomics (operands big-endian in the WQE,
// words host-endian in memory, replies in the byte order of ibgda_traits) and
// NOPs in order, and writes a 64-byte CQE into the QP's CQ (collapsed, or a
// ring with owner bits, checked for overrun) for every WQE that asks for one, body first and the last 8 bytes (counter,
// opcode, owner bit) last. A remote region of GPU memory (a registered window's cudaMalloc'd buffer) is reached as a
// NIC reaches it, by DMA: CUDA copies on a stream of the NIC's own that waits for no kernel (atomics on it are atomic
// with respect to the NIC's other operations, as a NIC's are). A failure, injected or found, writes an error CQE with
// the syndrome a ConnectX would report and stops the QP, as the error state does.
class ibgda_emulated_nic {
public:
    struct region {
        int pe = 0;
        std::uint64_t base = 0;
        std::uint64_t bytes = 0;
        std::uint32_t key = 0;
        int gpu = -1;  // remote regions: the GPU whose memory it is (reached by CUDA copies), -1 for host memory
    };
    struct statistics {
        std::uint64_t wqes = 0;            // WQEs executed (NOPs included)
        std::uint64_t cqes = 0;            // CQEs written (errors included)
        std::uint64_t doorbells = 0;       // distinct doorbell-register values seen
        std::uint64_t record_updates = 0;  // times the doorbell record had moved when looked at
    };

    ibgda_emulated_nic() = default;
    ibgda_emulated_nic(const ibgda_emulated_nic&) = delete;
    ibgda_emulated_nic& operator=(const ibgda_emulated_nic&) = delete;
    ~ibgda_emulated_nic() {
        stop();
        if (stream_) cudaStreamDestroy(stream_);
    }

    // Setup, before start(): the QP of channel `channel` from local PE `pe`
    // whose connection reaches `target` (found from the peer's QP number by
    // the caller). The one NIC thread serves every QP attached, each with its
    // own send queue, doorbell record, doorbell register and CQ, as a NIC's
    // QPs share nothing but the NIC.
    void attach(detail::ibgda_qp* qp, int pe, int target, int channel = 0) {
        auto b = std::make_unique<binding>();
        b->qp = qp;
        b->pe = pe;
        b->target = target;
        b->channel = channel;
        bindings_.push_back(std::move(b));
    }

    // Test hook: the QP of `channel` from `pe` to `target` executes nothing
    // (its WQEs wait, as behind a stalled link) until resume(); the others go on.
    void pause(int pe, int target, int channel) { set_paused(pe, target, channel, true); }
    void resume(int pe, int target, int channel) { set_paused(pe, target, channel, false); }
    // WQEs executed so far on that QP.
    std::uint64_t executed(int pe, int target, int channel) const {
        for (const auto& b : bindings_)
            if (b->pe == pe && b->target == target && b->channel == channel) return b->executed.load();
        return 0;
    }
    // Local memory of `pe` (data segments) and remotely accessible memory
    // (remote-address segments); registration may continue while running.
    void add_local_region(region r) {
        std::lock_guard lock(regions_mutex_);
        local_.push_back(r);
    }
    void add_remote_region(region r) {
        std::lock_guard lock(regions_mutex_);
        remote_.push_back(r);
    }
    // Deregistration: `pe`'s remote region under `key` is gone (WQEs naming it fail with a remote access error).
    void remove_remote_region(int pe, std::uint32_t key) {
        std::lock_guard lock(regions_mutex_);
        for (auto at = remote_.begin(); at != remote_.end(); ++at)
            if (at->pe == pe && at->key == key) {
                remote_.erase(at);
                return;
            }
    }
    // Test hook: PE `pe`'s next window registration is refused, as a NIC out of memory keys refuses one.
    void refuse_next_registration(int pe) {
        std::lock_guard lock(regions_mutex_);
        refused_.push_back(pe);
    }
    // Whether a refusal for `pe` is pending (ibgda_domain asks before registering; the refusal is used up).
    bool take_refusal(int pe) {
        std::lock_guard lock(regions_mutex_);
        for (auto at = refused_.begin(); at != refused_.end(); ++at)
            if (*at == pe) {
                refused_.erase(at);
                return true;
            }
        return false;
    }
    // Whether a WQE to `pe` naming [address, address + bytes) under `rkey` would pass the remote checks.
    bool resolves(int pe, std::uint32_t rkey, std::uint64_t address, std::uint64_t bytes) {
        return remote_at(pe, rkey, address, bytes).found;
    }

    void start() {
        if (thread_.joinable()) return;
        running_.store(true);
        thread_ = std::thread([this] { run(); });
    }
    void stop() {
        running_.store(false);
        if (thread_.joinable()) thread_.join();
    }

    // The next WQE executed on the QP from `pe` to `target` fails with this
    // syndrome instead (a remote access error by default).
    void fail_next(int pe, int target, std::uint8_t syndrome = 0x13, std::uint8_t vendor_syndrome = 0x88) {
        for (auto& b : bindings_)
            if (b->pe == pe && b->target == target) b->inject.store(int(syndrome) | (int(vendor_syndrome) << 8));
    }

    statistics stats() const {
        statistics s;
        s.wqes = wqes_.load();
        s.cqes = cqes_.load();
        s.doorbells = doorbells_.load();
        s.record_updates = record_updates_.load();
        return s;
    }
    // Empty while every check passed; else what the first failed check saw.
    std::string first_violation() const {
        std::lock_guard lock(violation_mutex_);
        return violation_;
    }

private:
    struct binding {
        detail::ibgda_qp* qp = nullptr;
        int pe = 0;
        int target = 0;
        int channel = 0;
        std::atomic<bool> paused{false};
        std::atomic<std::uint64_t> executed{0};  // WQEs
        std::uint64_t consumed = 0;              // blocks executed
        std::uint64_t last_doorbell = 0;
        std::uint64_t cqes = 0;  // drives the owner bit
        bool failed = false;
        std::atomic<int> inject{-1};
    };

    // What executing a WQE found: 0 or a syndrome (+ vendor syndrome << 8).
    static constexpr int ok = 0;
    static constexpr int local_length_error = 0x01;
    static constexpr int local_qp_operation_error = 0x02;
    static constexpr int local_protection_error = 0x04;
    static constexpr int remote_access_error = 0x13;
    static constexpr int remote_invalid_request = 0x12;

    void run() {
        auto last_progress = std::chrono::steady_clock::now();
        while (running_.load(std::memory_order_relaxed)) {
            bool progress = false;
            for (auto& b : bindings_) progress |= service(*b);
            const auto now = std::chrono::steady_clock::now();
            if (progress) {
                last_progress = now;
            } else if (now - last_progress < std::chrono::microseconds(200)) {
                std::this_thread::yield();  // producers are usually threads on the same few cores
            } else {
                std::this_thread::sleep_for(std::chrono::microseconds(20));
            }
        }
    }

    static std::uint32_t load32(const std::uint32_t* p) {
        return std::atomic_ref<std::uint32_t>(*const_cast<std::uint32_t*>(p)).load(std::memory_order_acquire);
    }

    void violation(const binding& b, const std::string& what) {
        std::lock_guard lock(violation_mutex_);
        if (violation_.empty())
            violation_ = "QP 0x" + hex(b.qp->qpn) + " (PE " + std::to_string(b.pe) + " -> PE " +
                         std::to_string(b.target) + "): " + what;
    }
    static std::string hex(std::uint64_t v) {
        char text[24];
        std::snprintf(text, sizeof text, "%llx", static_cast<unsigned long long>(v));
        return text;
    }

    void set_paused(int pe, int target, int channel, bool paused) {
        for (auto& b : bindings_)
            if (b->pe == pe && b->target == target && b->channel == channel) b->paused.store(paused);
    }

    bool service(binding& b) {
        if (b.failed || b.paused.load(std::memory_order_relaxed)) return false;
        auto& qp = *b.qp;
        // The register first: a ring always follows its record update, so the
        // record read after it covers the WQE the ring names.
        const std::uint64_t rang = std::atomic_ref<std::uint64_t>(*qp.doorbell).load(std::memory_order_acquire);
        const std::uint16_t announced = std::uint16_t(mlx5::from_be32(load32(qp.doorbell_record + 1)));
        if (rang != b.last_doorbell) {
            b.last_doorbell = rang;
            doorbells_.fetch_add(1);
            const std::uint32_t head = mlx5::from_be32(std::uint32_t(rang));
            const std::uint32_t qpn_ds = mlx5::from_be32(std::uint32_t(rang >> 32));
            const auto named = std::uint16_t(head >> 8);
            if ((qpn_ds >> 8) != qp.qpn) violation(b, "doorbell rung with QP number 0x" + hex(qpn_ds >> 8));
            // The record, read after the ring, covers the named WQE (it may
            // have moved further since: producers keep publishing).
            else if (std::uint16_t(announced - named) == 0 || std::uint16_t(announced - named) > 0x8000)
                violation(b, "doorbell names WQE " + std::to_string(named) + " which the doorbell record (" +
                                 std::to_string(announced) + ") does not cover");
        }
        const auto pending = std::uint16_t(announced - std::uint16_t(b.consumed));
        if (pending == 0) return false;
        record_updates_.fetch_add(1);
        if (pending > qp.blocks) {
            violation(b, "doorbell record moved " + std::to_string(pending) + " blocks ahead of a ring of " +
                             std::to_string(qp.blocks));
            fail(b, local_qp_operation_error, std::uint16_t(b.consumed), 0);
            return true;
        }
        while (std::uint16_t(b.consumed) != announced && !b.failed) execute(b);
        return true;
    }

    void execute(binding& b) {
        auto& qp = *b.qp;
        const std::uint32_t mask = qp.blocks - 1;
        std::uint32_t w[32] = {};
        std::memcpy(w, qp.send_queue + (b.consumed & mask) * 16u, 64);
        const std::uint32_t head = mlx5::from_be32(w[0]);
        const std::uint32_t qpn_ds = mlx5::from_be32(w[1]);
        const std::uint8_t op = std::uint8_t(head), opmod = std::uint8_t(head >> 24);
        const auto index = std::uint16_t(head >> 8);
        const std::uint8_t ds = std::uint8_t(qpn_ds & 0x3f);
        const std::uint8_t flags = std::uint8_t(w[2] >> 24);
        if (index != std::uint16_t(b.consumed) || (qpn_ds >> 8) != qp.qpn) {
            violation(b, "WQE at block " + std::to_string(b.consumed) + " carries index " + std::to_string(index) +
                             " and QP 0x" + hex(qpn_ds >> 8) +
                             ": the doorbell record announced it before it was written");
            fail(b, local_qp_operation_error, std::uint16_t(b.consumed), op);
            return;
        }
        const unsigned blocks = (ds + 3u) / 4u;
        if (ds == 0 || blocks > mlx5::max_wqe_building_blocks) {
            violation(b, "WQE with ds " + std::to_string(ds));
            fail(b, local_length_error, index, op);
            return;
        }
        if (blocks == 2) std::memcpy(w + 16, qp.send_queue + ((b.consumed + 1) & mask) * 16u, 64);
        int result = b.inject.exchange(-1);
        if (result < 0) result = perform(b, op, opmod, ds, w);
        wqes_.fetch_add(1);
        b.executed.fetch_add(1, std::memory_order_relaxed);
        if (result != ok) {
            fail(b, result, index, op);
            return;
        }
        b.consumed += blocks;
        if (flags & mlx5::fm_ce_se::cq_update) complete(b, mlx5::cqe_opcode::requester, index, op, 0, 0);
    }

    // The remote region a WQE names, if the checks pass: whether found, and whose GPU memory it is (-1: host).
    struct reach {
        bool found = false;
        int gpu = -1;
    };

    // Executes one WQE; returns ok or the syndrome.
    int perform(binding& b, std::uint8_t op, std::uint8_t opmod, std::uint8_t ds, const std::uint32_t* w) {
        if (op == mlx5::opcode::nop) return ok;
        const std::uint64_t raddr = (std::uint64_t(mlx5::from_be32(w[4])) << 32) | mlx5::from_be32(w[5]);
        const std::uint32_t rkey = mlx5::from_be32(w[6]);
        switch (op) {
            case mlx5::opcode::rdma_write:
                return perform_write(b, ds, w, raddr, rkey);
            case mlx5::opcode::rdma_read:
                return perform_read(b, ds, w, raddr, rkey);
            case mlx5::opcode::atomic_fa:
            case mlx5::opcode::atomic_cs:
            case mlx5::opcode::atomic_masked_fa:
            case mlx5::opcode::atomic_masked_cs:
                return perform_atomic(b, op, opmod, ds, w, raddr, rkey);
        }
        return local_qp_operation_error;
    }

    // The WQE's data segment number `seg` (4 words each), checked against `pe`'s local regions.
    bool data_segment(int pe, const std::uint32_t* w, unsigned seg, std::uint64_t& laddr, std::uint32_t& bytes) {
        bytes = mlx5::from_be32(w[4 * seg]);
        laddr = (std::uint64_t(mlx5::from_be32(w[4 * seg + 2])) << 32) | mlx5::from_be32(w[4 * seg + 3]);
        return local_ok(pe, mlx5::from_be32(w[4 * seg + 1]), laddr, bytes);
    }

    // An RDMA WQE's local data segment and the remote range it meets: ok, or the syndrome of the check that fails.
    int rdma_ranges(binding& b, std::uint8_t ds, const std::uint32_t* w, std::uint64_t raddr, std::uint32_t rkey,
                    std::uint64_t& laddr, std::uint32_t& bytes, reach& at) {
        if (ds != mlx5::rdma_ds) return local_length_error;
        if (!data_segment(b.pe, w, 2, laddr, bytes)) return local_protection_error;
        at = remote_at(b.target, rkey, raddr, bytes);
        return at.found ? ok : remote_access_error;
    }

    int perform_write(binding& b, std::uint8_t ds, const std::uint32_t* w, std::uint64_t raddr, std::uint32_t rkey) {
        const std::uint32_t first = mlx5::from_be32(w[8]);
        if (first & 0x80000000u) {  // inline
            const std::uint32_t bytes = first & 0x7fffffffu;
            if (mlx5::inline_write_ds(bytes) != ds) return local_length_error;
            const reach at = remote_at(b.target, rkey, raddr, bytes);
            if (!at.found) return remote_access_error;
            return write_remote(at, raddr, reinterpret_cast<const unsigned char*>(w) + 36, bytes);
        }
        std::uint64_t laddr;
        std::uint32_t bytes;
        reach at;
        if (const int checked = rdma_ranges(b, ds, w, raddr, rkey, laddr, bytes, at); checked != ok) return checked;
        return write_remote(at, raddr, reinterpret_cast<const unsigned char*>(laddr), bytes);
    }

    int perform_read(binding& b, std::uint8_t ds, const std::uint32_t* w, std::uint64_t raddr, std::uint32_t rkey) {
        std::uint64_t laddr;
        std::uint32_t bytes;
        reach at;
        if (const int checked = rdma_ranges(b, ds, w, raddr, rkey, laddr, bytes, at); checked != ok) return checked;
        if (at.gpu >= 0)
            return gpu_copy(at.gpu, reinterpret_cast<void*>(laddr), reinterpret_cast<const void*>(raddr), bytes);
        std::memcpy(reinterpret_cast<void*>(laddr), reinterpret_cast<const void*>(raddr), bytes);
        return ok;
    }

    int perform_atomic(binding& b, std::uint8_t op, std::uint8_t opmod, std::uint8_t ds, const std::uint32_t* w,
                       std::uint64_t raddr, std::uint32_t rkey) {
        const bool masked = op == mlx5::opcode::atomic_masked_fa || op == mlx5::opcode::atomic_masked_cs;
        const unsigned size = !masked                                   ? 8u
                              : opmod == mlx5::extended_atomic_opmod(8) ? 8u
                              : opmod == mlx5::extended_atomic_opmod(4) ? 4u
                                                                        : 0u;
        if (size == 0) return local_qp_operation_error;
        const bool wide_cs = masked && size == 8 && op == mlx5::opcode::atomic_masked_cs;
        const unsigned data_at = wide_cs ? 4 : 3;
        if (ds != data_at + 1) return local_length_error;
        std::uint64_t laddr;
        std::uint32_t bytes;
        if (!data_segment(b.pe, w, data_at, laddr, bytes)) return local_protection_error;
        if (bytes != size) return local_length_error;
        const reach at = remote_at(b.target, rkey, raddr, size);
        if (!at.found || raddr % size != 0) return remote_access_error;
        // GPU memory: the word comes to a host copy, the atomic runs there, the result goes back (this thread
        // is the only one that performs the NIC's atomics).
        std::uint64_t staged = 0;
        const std::uint64_t word = at.gpu >= 0 ? reinterpret_cast<std::uint64_t>(&staged) : raddr;
        if (at.gpu >= 0 && gpu_copy(at.gpu, &staged, reinterpret_cast<const void*>(raddr), size) != ok)
            return remote_access_error;
        auto be64_at = [&](unsigned word) {
            return (std::uint64_t(mlx5::from_be32(w[word])) << 32) | mlx5::from_be32(w[word + 1]);
        };
        std::uint64_t old;
        if (size == 8) {
            std::uint64_t a = be64_at(8), c = be64_at(10), am = 0, cm = 0;
            if (wide_cs) am = be64_at(12), cm = be64_at(14);
            old = execute_atomic<std::uint64_t>(op, word, a, c, am, cm);
        } else {
            old = execute_atomic<std::uint32_t>(op, word, mlx5::from_be32(w[8]), mlx5::from_be32(w[9]),
                                                mlx5::from_be32(w[10]), mlx5::from_be32(w[11]));
        }
        if (at.gpu >= 0 && gpu_copy(at.gpu, reinterpret_cast<void*>(raddr), &staged, size) != ok)
            return remote_access_error;
        const bool big_endian =
            masked ? ibgda_traits::masked_atomic_reply_big_endian : ibgda_traits::standard_atomic_reply_big_endian;
        if (size == 8) {
            const std::uint64_t reply = big_endian ? mlx5::byte_swap64(old) : old;
            std::memcpy(reinterpret_cast<void*>(laddr), &reply, 8);
        } else {
            const std::uint32_t reply = big_endian ? mlx5::byte_swap32(std::uint32_t(old)) : std::uint32_t(old);
            std::memcpy(reinterpret_cast<void*>(laddr), &reply, 4);
        }
        return ok;
    }

    // The atomic on a host-endian word of the target; returns the old value.
    // For masked CS: a, c, am, cm = swap, compare, swap mask, compare mask;
    // for masked FA: a = addend, c = field boundary; standard FA/CS as in IB.
    template <class U>
    static U execute_atomic(std::uint8_t op, std::uint64_t raddr, U a, U c, U am, U cm) {
        std::atomic_ref<U> word(*reinterpret_cast<U*>(raddr));
        U old = word.load();
        for (;;) {
            U next = old;
            switch (op) {
                case mlx5::opcode::atomic_fa:
                    next = U(old + a);
                    break;
                case mlx5::opcode::atomic_cs:
                    next = old == c ? a : old;
                    break;
                case mlx5::opcode::atomic_masked_fa:
                    next = field_add(old, a, c);
                    break;
                case mlx5::opcode::atomic_masked_cs:
                    next = ((old ^ c) & cm) == 0 ? U((old & ~am) | (a & am)) : old;
                    break;
            }
            if (next == old || word.compare_exchange_weak(old, next)) return old;
        }
    }

    // Addition in which a set bit i of `boundary` drops the carry out of bit i.
    template <class U>
    static U field_add(U x, U y, U boundary) {
        U sum = 0, carry = 0;
        for (unsigned i = 0; i < sizeof(U) * 8; ++i) {
            const U bx = (x >> i) & 1u, by = (y >> i) & 1u;
            const U s = bx + by + carry;
            sum |= U(s & 1u) << i;
            carry = ((boundary >> i) & 1u) ? U(0) : U(s >> 1);
        }
        return sum;
    }

    // Writes into target memory; aligned 4- and 8-byte words as single
    // atomic stores, so a PE polling a flag written by p() sees no torn value.
    static void copy_out(std::uint64_t to, const unsigned char* from, std::uint32_t bytes) {
        if (bytes == 8 && to % 8 == 0) {
            std::uint64_t v;
            std::memcpy(&v, from, 8);
            std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(to)).store(v, std::memory_order_release);
        } else if (bytes == 4 && to % 4 == 0) {
            std::uint32_t v;
            std::memcpy(&v, from, 4);
            std::atomic_ref<std::uint32_t>(*reinterpret_cast<std::uint32_t*>(to)).store(v, std::memory_order_release);
        } else if (bytes != 0) {
            std::memcpy(reinterpret_cast<void*>(to), from, bytes);
            std::atomic_thread_fence(std::memory_order_release);
        }
    }

    static bool inside(const region& r, std::uint64_t address, std::uint64_t bytes) {
        return address >= r.base && address - r.base <= r.bytes && bytes <= r.bytes - (address - r.base);
    }
    bool local_ok(int pe, std::uint32_t lkey, std::uint64_t address, std::uint64_t bytes) {
        std::lock_guard lock(regions_mutex_);
        for (const auto& r : local_)
            if (r.pe == pe && r.key == lkey && inside(r, address, bytes)) return true;
        return false;
    }
    reach remote_at(int pe, std::uint32_t rkey, std::uint64_t address, std::uint64_t bytes) {
        std::lock_guard lock(regions_mutex_);
        for (const auto& r : remote_)
            if (r.pe == pe && r.key == rkey && inside(r, address, bytes)) return {true, r.gpu};
        return {};
    }
    int write_remote(const reach& at, std::uint64_t to, const unsigned char* from, std::uint32_t bytes) {
        if (at.gpu >= 0) return gpu_copy(at.gpu, reinterpret_cast<void*>(to), from, bytes);
        copy_out(to, from, bytes);
        return ok;
    }
    // The NIC's DMA into or out of GPU memory: a copy on the NIC's own non-blocking stream (it waits for no kernel:
    // the kernels that post these WQEs are running), waited for before the WQE completes.
    int gpu_copy(int gpu, void* to, const void* from, std::size_t bytes) {
        if (cudaSetDevice(gpu) != cudaSuccess ||
            (!stream_ && cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking) != cudaSuccess) ||
            cudaMemcpyAsync(to, from, bytes, cudaMemcpyDefault, stream_) != cudaSuccess ||
            cudaStreamSynchronize(stream_) != cudaSuccess) {
            const cudaError_t e = cudaGetLastError();
            std::lock_guard lock(violation_mutex_);
            if (violation_.empty()) violation_ = std::string("DMA of GPU memory failed: ") + cudaGetErrorString(e);
            return remote_access_error;
        }
        return ok;
    }

    void fail(binding& b, int result, std::uint16_t index, std::uint8_t op) {
        b.failed = true;
        complete(b, mlx5::cqe_opcode::requester_error, index, op, std::uint8_t(result), std::uint8_t(result >> 8));
    }

    void complete(binding& b, std::uint8_t cqe_op, std::uint16_t index, std::uint8_t wqe_op, std::uint8_t syndrome,
                  std::uint8_t vendor) {
        auto& qp = *b.qp;
        if (qp.cq_entries > 1) {  // a ring: the consumer must have freed the entry
            const std::uint32_t consumer = mlx5::from_be32(load32(qp.cq_doorbell_record)) & 0xffffffu;
            if (((std::uint32_t(b.cqes) - consumer) & 0xffffffu) >= qp.cq_entries)
                violation(b, "CQ overrun: " + std::to_string(b.cqes) + " CQEs written, consumer index " +
                                 std::to_string(consumer) + ", " + std::to_string(qp.cq_entries) + " entries");
        }
        // Entry cqes mod entries; the owner bit is the pass parity (a collapsed
        // CQ has one entry, so it flips with every CQE).
        std::uint64_t* entry = qp.cqe + (b.cqes & (qp.cq_entries - 1)) * 8u;
        const bool owner = ((b.cqes / qp.cq_entries) & 1u) != 0;
        ++b.cqes;
        auto* cqe = reinterpret_cast<unsigned char*>(entry);
        std::memset(cqe, 0, 56);
        cqe[mlx5::cqe_field::vendor_syndrome] = vendor;
        cqe[mlx5::cqe_field::syndrome] = syndrome;
        const auto tail = mlx5::cqe_tail::make(cqe_op, owner, index, wqe_op, qp.qpn);
        std::atomic_ref<std::uint64_t>(entry[7]).store(tail.raw, std::memory_order_release);
        cqes_.fetch_add(1);
    }

    std::vector<std::unique_ptr<binding>> bindings_;
    std::mutex regions_mutex_;
    std::vector<region> local_, remote_;
    std::vector<int> refused_;  // PEs whose next registration is refused (refuse_next_registration)
    mutable std::mutex violation_mutex_;
    std::string violation_;
    std::atomic<std::uint64_t> wqes_{0}, cqes_{0}, doorbells_{0}, record_updates_{0};
    std::atomic<bool> running_{false};
    std::thread thread_;
    cudaStream_t stream_ = nullptr;  // the NIC thread's, for GPU memory (one GPU per process in the suites)
};

PGAS_NAMESPACE_END
