// The posting layer of the libfabric proxy: the queue of commands as fabric operations, their records, merged
// and injected writes, the flushes that confirm injected puts, and the fi_write/fi_read/fi_*atomic calls.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/core/ordering.hpp>
#include <pgas/detail/heap_layout.hpp>
#include <pgas/host/libfabric/endpoint.hpp>
#include <pgas/host/libfabric/provider.hpp>
#include <pgas/host/libfabric/staging.hpp>
#include <pgas/host/libfabric/windows.hpp>
#include <pgas/transport/proxy/command.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

PGAS_NAMESPACE_BEGIN
namespace ofi {

// Commands become work items (split: one per chunk), work items become posted
// operations with a record each (pump), or injected writes under flush
// delivery; fabric_backend completes them.
class fabric_posting : public fabric_staging {
public:
    // Inserts every PE's address (cards indexed by world PE).
    void connect(const std::vector<address_card>& cards) {
        peers_.assign(cards.size(), peer{});
        for (std::size_t pe = 0; pe < cards.size(); ++pe) {
            peers_[pe].addr = insert_address(pe, cards[pe]);
            peers_[pe].base = (mr_mode_ & FI_MR_VIRT_ADDR) ? cards[pe].heap_base : 0;
            peers_[pe].key = cards[pe].heap_key;
        }
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

    fi_addr_t address(int pe) const { return peers_[std::size_t(pe)].addr; }
    std::uint64_t remote_address(int pe, std::uint64_t offset) const { return peers_[std::size_t(pe)].base + offset; }
    std::uint64_t remote_key(int pe) const { return peers_[std::size_t(pe)].key; }

protected:
    using fabric_staging::fabric_staging;
    ~fabric_posting() = default;

    enum class kind : std::uint8_t { write, read, atomic, flush };

    struct work {
        std::uint64_t token;
        kind what;
        bool device;
        amo amo_op;
        fi_datatype type;
        int pe;
        std::uint64_t remote;  // heap offset, or byte offset into `window` (messages)
        void* local;           // write source / read destination / atomic result (nullptr: none)
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

    // The operation records (each with its 64 scratch bytes) and the buffer injected writes are gathered in.
    void open_records() {
        gather_.resize(std::max<std::size_t>(inject_size_, 64));
        records_.resize(s_.max_in_flight);
        for (std::uint32_t i = 0; i < s_.max_in_flight; ++i) {
            records_[i].index = i;
            free_records_.push_back(s_.max_in_flight - 1 - i);
        }
    }

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

    static fi_datatype datatype(proxy::value_kind k) {
        switch (k) {
            case proxy::value_kind::u32:
                return FI_UINT32;
            case proxy::value_kind::u64:
                return FI_UINT64;
            case proxy::value_kind::i32:
                return FI_INT32;
            case proxy::value_kind::i64:
                return FI_INT64;
            case proxy::value_kind::f32:
                return FI_FLOAT;
            case proxy::value_kind::f64:
                return FI_DOUBLE;
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

    // PE pe's buffer of window `window`, or a failure naming it (fabric_windows::find_window).
    target window_target(kind what, int pe, std::uint64_t window) {
        target t{};
        if (find_window(pe, window, t)) return t;
        queue_.clear();
        fail(errc::invalid_argument, s_.pe, "libfabric proxy",
             std::string(op_name(what)) + " to PE " + std::to_string(pe) + " names window " + std::to_string(window) +
                 ", which is not registered with this libfabric domain (released, or not a window)");
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
            if (!mergeable(x, limit) || x.pe != w.pe || x.token != w.token + n || x.key != w.key ||
                x.addr != w.addr + total || total + x.bytes > limit)
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
        std::byte* scratch = record_scratch(r.index);
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
        std::byte* scratch = record_scratch(r.index);
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
        std::byte* scratch = record_scratch(r.index);
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
        const ssize_t rc = ordered_
                               ? fi_fetch_atomic(ep_, scratch, 1, scratch_desc_, scratch + 16, scratch_desc_, p.addr,
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
                 " bytes at " + where(w) + ") with provider " + provider() + ": " +
                 describe(op_name(w.what), long(rc)));
    }

    static std::string where(const work& w) {
        return w.window == proxy::no_window
                   ? "heap offset " + std::to_string(w.remote)
                   : "byte " + std::to_string(w.remote) + " of window " + std::to_string(w.window);
    }

    static const char* op_name(kind k) {
        return k == kind::write   ? "fi_write"
               : k == kind::read  ? "fi_read"
               : k == kind::flush ? "flush of injected puts"
                                  : "fi_atomic";
    }

    ssize_t post(const work& w, record& r, void* buffer, void* desc, std::byte* scratch) {
        const fi_addr_t to = peers_[std::size_t(w.pe)].addr;
        const std::uint64_t addr = w.addr, key = w.key;
        void* context = &r.context;
        switch (w.what) {
            case kind::write:
                return fi_write(ep_, buffer, w.bytes, desc, to, addr, key, context);
            case kind::read:
                return fi_read(ep_, buffer, w.bytes, desc, to, addr, key, context);
            case kind::atomic:
                break;
            case kind::flush:
                return -FI_EINVAL;  // never queued (post_flush)
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
                return fi_compare_atomic(ep_, scratch, 1, scratch_desc_, scratch + 8, scratch_desc_, result,
                                         scratch_desc_, to, addr, key, w.type, FI_CSWAP, context);
            default:
                break;
        }
        const fi_op op = w.amo_op == amo::fetch       ? FI_ATOMIC_READ
                         : w.amo_op == amo::swap      ? FI_ATOMIC_WRITE
                         : w.amo_op == amo::fetch_and ? FI_BAND
                         : w.amo_op == amo::fetch_or  ? FI_BOR
                                                      : FI_BXOR;
        return fi_fetch_atomic(ep_, scratch, 1, scratch_desc_, result, scratch_desc_, to, addr, key, w.type, op,
                               context);
    }

    static std::int64_t clock_ns() {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
    }

    std::vector<record> records_;
    std::vector<std::uint32_t> free_records_;
    std::deque<work> queue_;
    std::vector<peer> peers_;
    std::vector<int> dirty_;         // PEs with injected puts no posted operation confirms yet
    std::vector<std::byte> gather_;  // merged or staged bytes of one injected write
    bool waited_on_ = false;         // inside flush(true)
};

}  // namespace ofi
PGAS_NAMESPACE_END
