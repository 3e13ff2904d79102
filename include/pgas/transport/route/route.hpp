// pgas::route<Near, Far>: per-peer composition of two transports (NVLink inside the node, a network outside).
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/core/ordering.hpp>
#include <pgas/transport/concepts.hpp>
#include <pgas/transport/host/host.hpp>
#include <pgas/transport/libfabric/libfabric.hpp>
#include <pgas/transport/nvlink/nvlink.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

PGAS_NAMESPACE_BEGIN

/// The world PEs first, first + 1, ..., first + count - 1 (empty when count is
/// 0): the PEs a route sends through its Near transport, typically the
/// caller's node (route_node_pes in host/route/context.hpp finds it).
struct pe_range {
    int first = 0;  ///< the first world PE
    int count = 0;  ///< how many consecutive PEs

    /// Whether `pe` is one of them.
    PGAS_HD constexpr bool contains(int pe) const { return pe >= first && pe - first < count; }
};

/// The device-side state of a route: both transports by value and the range of
/// PEs that Near serves. Every operation naming a PE takes one branch on that
/// range and calls Near's or Far's own code, both inlined; a context of a
/// single transport has no branch at all. Made by pgas::route_context
/// (host/route/context.hpp).
///
/// Semantics are the two transports', per target PE (each PE is always served
/// by the same one):
///  - put/get/p/g/_nbi, atomics, signal, put_signal(_nbi): those of the
///    transport serving `pe` (p and g go through its put/get: a 4/8-byte p
///    to a near peer is not the single atomic store it is on nvlink/host, so
///    a word another PE polls is written with atomic_set or a signal).
///  - fence: Near's fence, then Far's: later operations to each PE are
///    ordered after earlier ones to that PE, on both paths.
///  - quiet: Near's quiet, then Far's: every earlier operation of the caller,
///    on either path, is complete (remote visibility) on return.
///  - signal and put_signal are ordered after earlier puts to the same PE
///    only (the concepts' per-PE contract, as ibgda's per-QP order): a Near
///    signal does not wait for Far puts still in flight to another PE. Call
///    quiet first when another PE must see them (pgas::barrier does).
///
/// Not a load_store_transport, even when Near is: Far's peers are not mapped.
/// But a peer_pointer_transport: ctx.peer() (peer_address) is Near's pointer
/// for the near peers Near maps and nullptr for the others, so a collective
/// over a team of near peers keeps Near's load/store (LL and direct) paths and
/// one with a far member takes put/get (coll/detail/direct.hpp's choose_path).
template <class Near, class Far>
class route {
    static_assert(transport<Near> && transport<Far>,
                  "pgas: route<Near, Far> needs both Near and Far to model pgas::transport "
                  "(see transport/concepts.hpp)");
    static_assert(rma_transport<Near>,
                  "pgas: route<Near, Far>: Near cannot put/get (it does not model pgas::rma_transport), "
                  "so the PEs it serves would have no path");
    static_assert(rma_transport<Far>,
                  "pgas: route<Near, Far>: Far cannot put/get (it does not model pgas::rma_transport), "
                  "so the PEs outside Near's range would have no path");

public:
    /// The transport's name in diagnostics ("route").
    static constexpr const char* name = "route";
    /// Opts in to pgas::rma_transport.
    static constexpr bool provides_rma = true;
    /// Opts in to pgas::atomic_transport when Near and Far both model it.
    static constexpr bool provides_atomics = atomic_transport<Near> && atomic_transport<Far>;
    /// Opts in to pgas::signal_transport when Near and Far both model it.
    static constexpr bool provides_signals = signal_transport<Near> && signal_transport<Far>;
    /// Not a pgas::load_store_transport: ctx.peer() is nullptr.
    static constexpr bool provides_load_store = false;

    /// Near.
    using near_type = Near;
    /// Far.
    using far_type = Far;

    /// An empty transport (reaches no PE), as in a default-constructed context.
    route() = default;
    /// Both transports' states and the PEs Near serves (route_context makes it, with its checks).
    route(Near near, Far far, pe_range near_pes) : near_(near), far_(far), near_pes_(near_pes) {}

    /// This PE's index in the world.
    PGAS_HD int my_pe() const { return near_.my_pe(); }
    /// PEs in the world.
    PGAS_HD int n_pes() const { return near_.n_pes(); }
    /// Whether this transport reaches PE `pe` at all.
    PGAS_HD bool reachable(int pe) const { return is_near(pe) ? near_.reachable(pe) : far_.reachable(pe); }
    /// This PE's own heap byte at symmetric `offset`.
    PGAS_HD void* local_address(std::uint64_t offset) const { return near_.local_address(offset); }
    /// Bytes of each PE's symmetric heap.
    PGAS_HD std::uint64_t heap_bytes() const { return near_.heap_bytes(); }

    /// Whether operations to pe go through Near (else through Far).
    PGAS_HD bool is_near(int pe) const { return near_pes_.contains(pe); }
    /// The PEs Near serves.
    PGAS_HD pe_range near_pes() const { return near_pes_; }
    /// Near's state.
    PGAS_HD const Near& near() const { return near_; }
    /// Far's state.
    PGAS_HD const Far& far() const { return far_; }

    /// A pointer the caller may load from and store to for a PE Near serves
    /// and maps; nullptr for every other PE (and when Near maps nothing).
    PGAS_HD void* near_address(std::uint64_t offset, int pe) const {
        if constexpr (load_store_transport<Near>) {
            if (is_near(pe)) return near_.peer_address(offset, pe);
        }
        return nullptr;
    }
    /// The same, as every peer_pointer_transport answers ctx.peer().
    PGAS_HD void* peer_address(std::uint64_t offset, int pe) const { return near_address(offset, pe); }

    // --- rma -------------------------------------------------------------------
    /// Transport member behind pgas::put (every thread of `G` calls it; programs call pgas::put).
    template <class G>
    PGAS_HD void put(std::uint64_t dst, const void* src, std::size_t bytes, int pe) const {
        serving(pe, [&](const auto& tr) { tr.template put<G>(dst, src, bytes, pe); });
    }
    /// Transport member behind pgas::put_nbi.
    template <class G>
    PGAS_HD void put_nbi(std::uint64_t dst, const void* src, std::size_t bytes, int pe) const {
        serving(pe, [&](const auto& tr) { tr.template put_nbi<G>(dst, src, bytes, pe); });
    }
    /// Transport member behind pgas::get.
    template <class G>
    PGAS_HD void get(void* dst, std::uint64_t src, std::size_t bytes, int pe) const {
        serving(pe, [&](const auto& tr) { tr.template get<G>(dst, src, bytes, pe); });
    }
    /// Transport member behind pgas::get_nbi.
    template <class G>
    PGAS_HD void get_nbi(void* dst, std::uint64_t src, std::size_t bytes, int pe) const {
        serving(pe, [&](const auto& tr) { tr.template get_nbi<G>(dst, src, bytes, pe); });
    }
    /// Transport member behind pgas::fence.
    template <class G>
    PGAS_HD void fence() const {
        near_.template fence<G>();
        far_.template fence<G>();
    }
    /// Transport member behind pgas::quiet.
    template <class G>
    PGAS_HD void quiet() const {
        near_.template quiet<G>();
        far_.template quiet<G>();
    }
    /// Transport member behind pgas::quiet(ctx, pe): the quiet of the transport serving `pe`.
    template <class G>
    PGAS_HD void quiet_pe(int pe) const {
        serving(pe, [&](const auto& tr) { detail::transport_quiet_pe<G>(tr, pe); });
    }
    /// Transport member behind pgas::quiet_all: Near's, then Far's.
    template <class G>
    PGAS_HD void quiet_all() const {
        detail::transport_quiet_all<G>(near_);
        detail::transport_quiet_all<G>(far_);
    }
    /// Transport member behind pgas::flush_local: Near's, then Far's.
    template <class G>
    PGAS_HD void flush_local() const {
        detail::transport_flush_local<G>(near_);
        detail::transport_flush_local<G>(far_);
    }

    // --- channels ----------------------------------------------------------------
    /// The channel this value is bound to: Far's (the network path is what channels are for).
    PGAS_HD int channel() const { return channel_of(far_); }
    /// Far's channels per peer (route_context's Far builder chose them).
    PGAS_HD int channels() const { return channels_of(far_); }
    /// A copy bound to channel `c`: Far on `c`, Near on `c` modulo its own count (one path on nvlink/host).
    PGAS_HD route on_channel(int c) const {
        route bound = *this;
        if constexpr (channel_transport<Far>) bound.far_ = far_.on_channel(c);
        if constexpr (channel_transport<Near>) bound.near_ = near_.on_channel(c % near_.channels());
        return bound;
    }

    // --- atomics (one thread) ----------------------------------------------------
    /// Transport member behind every fetching `atomic_*` call: performs `op` on the word at `offset` of PE `pe` (one
    /// thread) and returns its old value.
    template <class V>
    PGAS_HD V atomic(amo op, std::uint64_t offset, V operand, V expected, int pe) const {
        return serving(pe, [&](const auto& tr) { return tr.template atomic<V>(op, offset, operand, expected, pe); });
    }
    /// Transport member behind the non-fetching `atomic_*` calls (pgas::atomic_update_transport): completes at quiet.
    template <class V>
    PGAS_HD void atomic_update(amo op, std::uint64_t offset, V operand, int pe) const {
        serving(pe, [&](const auto& tr) { detail::start_atomic_update(tr, op, offset, operand, pe); });
    }
    /// Transport member: fetch-add, floating point included (pgas::atomic_transport requires it).
    template <class V>
    PGAS_HD V atomic_add(std::uint64_t offset, V operand, int pe) const {
        return serving(pe, [&](const auto& tr) { return tr.template atomic_add<V>(offset, operand, pe); });
    }

    // --- signals -------------------------------------------------------------------
    /// Transport member behind pgas::signal.
    PGAS_HD void signal(std::uint64_t offset, std::uint64_t value, signal_op op, int pe) const {
        serving(pe, [&](const auto& tr) { tr.signal(offset, value, op, pe); });
    }
    /// Transport member behind pgas::put_signal.
    template <class G>
    PGAS_HD void put_signal(std::uint64_t dst, const void* src, std::size_t bytes, std::uint64_t sig,
                            std::uint64_t value, signal_op op, int pe) const {
        serving(pe, [&](const auto& tr) { tr.template put_signal<G>(dst, src, bytes, sig, value, op, pe); });
    }
    /// Transport member behind pgas::put_signal_nbi.
    template <class G>
    PGAS_HD void put_signal_nbi(std::uint64_t dst, const void* src, std::size_t bytes, std::uint64_t sig,
                                std::uint64_t value, signal_op op, int pe) const {
        serving(pe, [&](const auto& tr) { tr.template put_signal_nbi<G>(dst, src, bytes, sig, value, op, pe); });
    }

private:
    // Calls f with the state of the transport serving `pe`: Near's for the PEs in its range, else Far's.
    template <class F>
    PGAS_HD decltype(auto) serving(int pe, F&& f) const {
        if (is_near(pe)) return f(near_);
        return f(far_);
    }
    template <class T>
    PGAS_HD static int channel_of(const T& t) {
        if constexpr (channel_transport<T>)
            return t.channel();
        else
            return 0;
    }
    template <class T>
    PGAS_HD static int channels_of(const T& t) {
        if constexpr (channel_transport<T>)
            return t.channels();
        else
            return 1;
    }

    Near near_;
    Far far_;
    pe_range near_pes_;
};

// The compositions pgas is built for: NVLink (or the host transport's shared
// memory) inside the node, the libfabric proxy outside.
static_assert(rma_transport<route<nvlink, libfabric>>);
static_assert(atomic_transport<route<nvlink, libfabric>>);
static_assert(signal_transport<route<nvlink, libfabric>>);
static_assert(!load_store_transport<route<nvlink, libfabric>> && peer_pointer_transport<route<nvlink, libfabric>>);
static_assert(rma_transport<route<host, libfabric>> && atomic_transport<route<host, libfabric>> &&
              signal_transport<route<host, libfabric>> && !load_store_transport<route<host, libfabric>>);

PGAS_NAMESPACE_END
