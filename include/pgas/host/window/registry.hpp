// window_registry: a world's registered windows (world::register_window), handed only the parts of the world they
// touch: the bootstrap for the exchanges, the heap and its allocator for the tables, the local PEs and their GPUs.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/core/symmetric_ptr.hpp>
#include <pgas/core/window.hpp>
#include <pgas/host/bootstrap/bootstrap.hpp>
#include <pgas/host/bootstrap/fd_exchange.hpp>
#include <pgas/host/cuda/check.hpp>
#include <pgas/host/heap/allocator.hpp>
#include <pgas/host/heap/gpu.hpp>
#include <pgas/host/heap/memory.hpp>
#include <pgas/host/nvtx.hpp>
#include <pgas/host/window/gpu.hpp>
#include <pgas/host/window/observer.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

PGAS_NAMESPACE_BEGIN
namespace detail {

// What a window registry is handed of its world: none of its lifecycle, teams or contexts.
struct window_parts {
    bootstrap* channel = nullptr;         // the collective exchanges of register_window and release_window
    heap_memory* memory = nullptr;        // every local PE's heap (the tables are written there) and its GPU
    heap_allocator* allocator = nullptr;  // where the tables are allocated
    std::vector<int> local_pes;           // world PE of each local PE
    int n_pes = 0;
    // Throws errc::heap_exhausted naming `call`, `count` elements of `element` bytes and the heap's free bytes.
    std::function<void(const char* call, std::uint64_t count, std::size_t element)> heap_exhausted;
};

// The live windows of one world and the observers told of each; world::register_window and its kin forward here.
// Collective calls as the world's: every participant of the bootstrap, in the same order.
class window_registry {
public:
    explicit window_registry(window_parts parts)
        : parts_(std::move(parts)), gpu_(dynamic_cast<gpu_heap_memory*>(parts_.memory)) {}
    window_registry(const window_registry&) = delete;
    window_registry& operator=(const window_registry&) = delete;

    // Collective (world::register_window): buffers[i] is local PE i's own buffer of `count` elements of T.
    template <class T, class Count>
    window<T> register_buffers(const std::vector<T*>& buffers, Count count) {
        static_assert(std::is_trivially_copyable_v<T>, "pgas: window elements must be trivially copyable");
        std::vector<std::byte*> raw;
        for (T* buffer : buffers)
            raw.push_back(reinterpret_cast<std::byte*>(const_cast<std::remove_const_t<T>*>(buffer)));
        const bool positive = count > 0;
        const auto made =
            register_bytes(raw, positive ? std::uint64_t(count) * sizeof(T) : 0,
                           positive ? std::string() : "element count must be positive, got " + std::to_string(count));
        return window<T>(offset_tag{}, made.table, std::uint64_t(count), 0, made.id);
    }

    // Whether the window of table offset `table` and id `id` is live here (registered, not yet released).
    bool live(std::uint64_t table, std::uint32_t id) const { return find(table, id) != windows_.end(); }

    // Collective (world::release_window, which checked it is live on every PE): the observers forget the window,
    // its peer mappings close and its table goes back to the heap.
    void release(std::uint64_t table, std::uint32_t id) {
        const auto at = find(table, id);
        parts_.channel->barrier();  // no PE still maps it in a host call
        for (window_observer* observer : observers_) observer->window_releasing(at->table);
        for (int local = 0; local < n_local_pes(); ++local)
            parts_.memory->zero(local, at->table, std::uint64_t(parts_.n_pes) * sizeof(window_row));
        parts_.allocator->deallocate(at->table);
        windows_.erase(at);
        parts_.channel->barrier();  // every PE dropped it before any reuses the heap block
    }

    // Windows registered and not yet released.
    int size() const { return int(windows_.size()); }

    // Collective (world::attach_window_observer): `observer` learns of the windows live now, whose tables are
    // rewritten with what it filled in, and of every window from now on.
    void attach(window_observer& observer) {
        for (auto& record : windows_) {
            observer.window_registered({record.table, record.id, record.bytes, record.buffers}, record.rows);
            for (int local = 0; local < n_local_pes(); ++local)
                write_heap(local, record.table, record.rows.data(), record.rows.size() * sizeof(window_row));
        }
        observers_.push_back(&observer);
    }

    // Local (world::detach_window_observer): `observer` hears of no more windows.
    void detach(window_observer& observer) {
        const auto at = std::find(observers_.begin(), observers_.end(), &observer);
        if (at != observers_.end()) observers_.erase(at);
    }

private:
    // A live window: its table in the heap, and the node peers' allocations mapped for it.
    struct window_record {
        explicit window_record(ipc_mappings& ipc) : mappings(ipc) {}
        std::uint64_t table = 0;
        std::uint32_t id = 0;
        std::uint64_t bytes = 0;
        std::vector<std::byte*> buffers;  // the local PEs' own (for an observer that attaches later)
        std::vector<window_row> rows;     // the table as written (an observer that attaches later adds keys)
        peer_mappings mappings;
    };

    // What each participant of the bootstrap tells the others about its buffer (one local PE per participant
    // when there are several).
    struct window_card {
        std::int64_t pid = 0;
        std::uint64_t bytes = 0;
        std::uint64_t address = 0;
        std::uint64_t allocation =
            0;  // GPU: the allocation holding the buffer, its size, and the buffer's offset in it
        std::uint64_t allocation_bytes = 0;
        std::uint64_t offset = 0;
        std::int32_t ok = 0;
        buffer_sharing sharing = buffer_sharing::none;  // between processes: how it reaches the others
        std::int32_t pe = -1;
        std::uint32_t serial = 0;  // the window's id, when this card is world PE 0's
        cudaIpcMemHandle_t handle{};
    };

    // This process's buffers: each local PE's card, and why it cannot be a window (empty when it can).
    struct local_buffers {
        std::vector<window_card> cards;
        std::vector<std::string> problems;
        tcp::unique_fd exported;  // processes: this one's cuMemCreate allocation, as a descriptor
    };

    struct made_window {
        std::uint64_t table;
        std::uint32_t id;
    };

    // Window ids come from PE 0's process-wide counter, so two worlds of one process never share one and
    // release_window refuses another world's window even at the same table offset.
    static std::uint32_t next_window_serial() {
        static std::atomic<std::uint32_t> serial{0};
        return ++serial;
    }

    // register_window's body: check each local buffer, swap the cards, agree, map the peers' buffers, write the
    // table into every local PE's heap. `count_problem` is why the element count is refused (empty if it is not).
    made_window register_bytes(const std::vector<std::byte*>& buffers, std::uint64_t bytes,
                               const std::string& count_problem) {
        PGAS_NVTX_RANGE("pgas::world::register_window");
        bootstrap::call_scope call(*parts_.channel, host_call::register_window);
        local_buffers mine = check_buffers(buffers, bytes, count_problem);
        const std::vector<window_card> cards = swap_cards(mine.cards);
        refuse_bad_buffers(mine, cards, bytes);
        window_record record(ipc_);
        record.id = cards[0].serial;
        std::vector<window_row> rows(static_cast<std::size_t>(parts_.n_pes));
        std::string failure = map_peer_buffers(cards, mine.exported, record.mappings, rows);
        if (gpu_ != nullptr && failure.empty() && !between_processes()) failure = reach_local_gpus(mine.cards);
        agree_on_mapping(failure);
        const std::uint64_t table_bytes = std::uint64_t(parts_.n_pes) * sizeof(window_row);
        const auto table = parts_.allocator->allocate(table_bytes, heap_allocator::min_granule);
        if (!table) parts_.heap_exhausted("register_window", std::uint64_t(parts_.n_pes), sizeof(window_row));
        record.table = table.value();
        record.bytes = bytes;
        record.buffers = buffers;
        try {
            for (window_observer* observer : observers_)
                observer->window_registered({record.table, record.id, bytes, record.buffers}, rows);
        } catch (...) {  // every participant throws here together (window_observer's contract)
            parts_.allocator->deallocate(record.table);
            throw;
        }
        for (int local = 0; local < n_local_pes(); ++local) write_heap(local, record.table, rows.data(), table_bytes);
        record.rows = std::move(rows);
        windows_.push_back(std::move(record));
        parts_.channel->barrier();  // every PE's table is written before any kernel reads a peer's row
        return {*table, windows_.back().id};
    }

    // Each local PE's own checks: a problem here must not leave the other PEs waiting, so every PE first learns
    // every PE's verdict (the cards) and then all throw together.
    local_buffers check_buffers(const std::vector<std::byte*>& buffers, std::uint64_t bytes,
                                const std::string& count_problem) {
        local_buffers mine;
        mine.cards.resize(std::size_t(n_local_pes()));
        mine.problems.resize(mine.cards.size());
        for (int local = 0; local < n_local_pes(); ++local) {
            auto& card = mine.cards[std::size_t(local)];
            auto& problem = mine.problems[std::size_t(local)];
            std::byte* const buffer = buffers[std::size_t(local)];
            card.pid = std::int64_t(::getpid());
            card.pe = local_pe(local);
            card.bytes = bytes;
            if (card.pe == 0) card.serial = next_window_serial();
            card.address = reinterpret_cast<std::uintptr_t>(buffer);
            if (!count_problem.empty())
                problem = count_problem;
            else if (buffer == nullptr)
                problem = "null pointer (" + std::to_string(bytes) + " bytes)";
            else if (gpu_ != nullptr)
                problem = check_gpu_buffer(local, buffer, bytes, card, mine.exported);
            card.ok = problem.empty() ? 1 : 0;
        }
        return mine;
    }

    // A local PE's buffer on a GPU heap: the allocation holding it and, between processes, how it is shared.
    std::string check_gpu_buffer(int local, const std::byte* buffer, std::uint64_t bytes, window_card& card,
                                 tcp::unique_fd& exported) {
        const auto found = inspect_gpu_buffer(buffer, bytes, gpu_->device_of(local));
        card.allocation = found.allocation;
        card.allocation_bytes = found.allocation_bytes;
        card.offset = found.offset;
        if (!found.problem.empty() || !between_processes()) return found.problem;
        int fd = -1;
        std::string problem =
            export_allocation(found.allocation, gpu_->device_of(local), card.handle, card.sharing, fd);
        exported = tcp::unique_fd(fd);
        return problem;
    }

    // Every world PE's card, indexed by world PE.
    std::vector<window_card> swap_cards(const std::vector<window_card>& mine) {
        std::vector<window_card> cards(static_cast<std::size_t>(parts_.n_pes));
        if (parts_.channel->size() == 1) {
            for (const auto& card : mine) cards[std::size_t(card.pe)] = card;
        } else {
            const auto all = parts_.channel->allgather_value(mine.front());
            for (const auto& card : all) cards[std::size_t(card.pe)] = card;
        }
        return cards;
    }

    // Throws, on every PE together, for a buffer some PE refused, sizes that differ, or processes the heap cannot
    // reach each other's buffers between.
    void refuse_bad_buffers(const local_buffers& mine, const std::vector<window_card>& cards, std::uint64_t bytes) {
        for (int local = 0; local < n_local_pes(); ++local)
            if (!mine.problems[std::size_t(local)].empty())
                throw_error(errc::invalid_argument, local_pe(local), "register_window",
                            mine.problems[std::size_t(local)]);
        const int me = my_pe_or_all();
        for (const auto& card : cards)
            if (!card.ok)
                throw_error(
                    errc::invalid_argument, me, "register_window",
                    "PE " + std::to_string(card.pe) +
                        " passed a buffer it cannot register (its own error says why); no window was registered");
        for (const auto& card : cards)
            if (card.bytes != bytes)
                throw_error(errc::collective_mismatch, me, "register_window",
                            "bytes = " + std::to_string(bytes) + " here but " + std::to_string(card.bytes) + " on PE " +
                                std::to_string(card.pe));
        // A domain that reaches windows through its own fabric (libfabric) needs no mapping of the peers' memory:
        // their rows stay null and only its ops reach them.
        if (gpu_ == nullptr && observers_.empty())
            for (const auto& card : cards)
                if (card.pid != mine.cards.front().pid)
                    throw_error(errc::transport_unavailable, me, "register_window",
                                "PE " + std::to_string(card.pe) +
                                    " is another process: the host transport reaches a window only between PEs that "
                                    "are threads of one process (init_local(n), run_threads); between processes "
                                    "allocate the buffer in the symmetric heap (alloc)");
    }

    // Fills every PE's row with its buffer as this process reaches it (its own, a same-process peer's, a node
    // peer's mapped into `mappings`); returns why a mapping failed, or an empty string.
    std::string map_peer_buffers(const std::vector<window_card>& cards, tcp::unique_fd& exported,
                                 peer_mappings& mappings, std::vector<window_row>& rows) {
        // cuMemCreate buffers travel as descriptors: every process of the node passes one (those sharing theirs by
        // CUDA IPC pass /dev/null, since the exchange is collective), indexed like node.ranks.
        node_group node;
        std::vector<tcp::unique_fd> descriptors;
        if (std::any_of(cards.begin(), cards.end(),
                        [](const window_card& c) { return c.sharing == buffer_sharing::vmm_fd; })) {
            if (!exported) exported = tcp::unique_fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
            node = discover_node(*parts_.channel);
            for (int fd : allgather_fds(*parts_.channel, exported.get(), node)) descriptors.emplace_back(fd);
        }
        const std::int64_t pid = std::int64_t(::getpid());
        const int me = my_pe_or_all();
        for (const auto& card : cards) {
            auto& row = rows[std::size_t(card.pe)];
            row.bytes = card.bytes;
            if (card.pid == pid) {
                row.address = reinterpret_cast<std::byte*>(card.address);
                continue;
            }
            if (gpu_ == nullptr) continue;  // another process's host memory: an observer's fabric reaches it
            try {                           // a node peer's buffer (gpu_heap_memory spans one node only)
                if (card.sharing == buffer_sharing::vmm_fd) {
                    const auto at = std::find(node.ranks.begin(), node.ranks.end(), card.pe);
                    const int fd = descriptors.at(std::size_t(at - node.ranks.begin())).get();
                    row.address =
                        mappings.open_vmm(me, card.pe, card.allocation, card.allocation_bytes, fd, gpu_->device_of(0)) +
                        card.offset;
                } else {
                    row.address =
                        mappings.open(me, card.pe, card.allocation, card.handle, gpu_->device_of(0)) + card.offset;
                }
            } catch (const error& e) {
                return e.what();
            }
        }
        return {};
    }

    // One process's PEs on several GPUs read each other's buffers directly; returns why they cannot, or "".
    std::string reach_local_gpus(const std::vector<window_card>& mine) {
        try {
            std::vector<int> devices;
            for (int local = 0; local < n_local_pes(); ++local) devices.push_back(gpu_->device_of(local));
            for (int a = 0; a < n_local_pes(); ++a)
                for (int b = 0; b < n_local_pes(); ++b)
                    enable_peer_access(gpu_->device_of(a), gpu_->device_of(b), local_pe(a));
            for (int local = 0; local < n_local_pes(); ++local) {
                const auto& card = mine[std::size_t(local)];
                grant_vmm_access(card.allocation, card.allocation_bytes, gpu_->device_of(local), devices, card.pe);
            }
        } catch (const error& e) {
            return e.what();
        }
        return {};
    }

    // Every PE learns whether every other mapped the peers' buffers; all throw together when one did not.
    void agree_on_mapping(const std::string& failure) {
        const int me = my_pe_or_all();
        const auto verdicts = parts_.channel->allgather_value(std::int32_t(failure.empty() ? -1 : me));
        if (!failure.empty()) throw error(errc::cuda, me, "register_window", failure);
        for (std::int32_t failed : verdicts)
            if (failed >= 0)
                throw_error(errc::cuda, me, "register_window",
                            "PE " + std::to_string(failed) +
                                " could not map the others' buffers (its own error says "
                                "why); no window was registered");
    }

    // Copies bytes into local PE `local`'s heap at `offset` (host memory, or the PE's GPU, current for the copy).
    void write_heap(int local, std::uint64_t offset, const void* from, std::uint64_t bytes) {
        void* to = parts_.memory->local_base(local) + offset;
        if (parts_.memory->host_accessible()) {
            std::memcpy(to, from, bytes);
            return;
        }
        const device_guard on_device(gpu_ ? gpu_->device_of(local) : -1, local_pe(local), "register_window");
        check_cuda(cudaMemcpy(to, from, bytes, cudaMemcpyHostToDevice), local_pe(local), "register_window",
                   "cudaMemcpy of the window table");
    }

    std::vector<window_record>::iterator find(std::uint64_t table, std::uint32_t id) {
        return std::find_if(windows_.begin(), windows_.end(),
                            [&](const window_record& r) { return r.table == table && r.id == id; });
    }
    std::vector<window_record>::const_iterator find(std::uint64_t table, std::uint32_t id) const {
        return std::find_if(windows_.begin(), windows_.end(),
                            [&](const window_record& r) { return r.table == table && r.id == id; });
    }

    int n_local_pes() const { return int(parts_.local_pes.size()); }
    int local_pe(int local) const { return parts_.local_pes[std::size_t(local)]; }
    // -1 ("all local PEs") when the world drives several PEs.
    int my_pe_or_all() const { return n_local_pes() == 1 ? parts_.local_pes[0] : -1; }
    // One PE per process over several processes: buffers travel between processes.
    bool between_processes() const { return parts_.channel->size() > 1 && n_local_pes() == 1; }

    window_parts parts_;
    gpu_heap_memory* gpu_;                     // the heap as a GPU heap, or null for host memory
    std::vector<window_observer*> observers_;  // domains that reach windows through their own fabric
    ipc_mappings ipc_;                         // before the windows: each window's mappings close into it
    std::vector<window_record> windows_;
};

}  // namespace detail
PGAS_NAMESPACE_END
