// What every collective shares: the call's view of the team, argument checks, 8-byte unit I/O and slices.
#pragma once

#include <pgas/coll/detail/scratch.hpp>
#include <pgas/coll/ops.hpp>
#include <pgas/coll/tuning.hpp>
#include <pgas/core/error.hpp>
#include <pgas/core/scope.hpp>
#include <pgas/core/symmetric_ptr.hpp>
#include <pgas/core/team.hpp>
#include <pgas/device/context.hpp>
#include <pgas/device/rma.hpp>
#include <pgas/device/sync.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include <nv/target>

PGAS_NAMESPACE_BEGIN
namespace detail {

// Collective codes in the PGAS_CHECKS signature.
enum class coll_kind : unsigned { broadcast = 1, reduce, allreduce, allgather, reduce_scatter, alltoall };

// One collective call as seen by one PE: the context, the team bound to this
// PE, the caller's team index and the team size, and the LL channel this
// group's part uses (its part index; 0 for a whole call).
template <class Tr>
struct coll_call {
    const device::context<Tr>& ctx;
    team t;
    int me;
    int n;
    const char* name;
    int channel = 0;

    PGAS_HD int world_pe(int index) const { return t.world_pe(index); }
    PGAS_HD std::uint64_t slot_base() const { return coll_scratch::slot_base(t.slot()); }
    // This PE's LL counter `k` for team member `index` on this call's channel.
    PGAS_HD std::uint64_t* counter(coll_scratch::counter k, int index) const {
        return ctx.local(coll_scratch::at<std::uint64_t>(coll_scratch::counter_offset(t.slot(), k, channel, index)));
    }
    // Whether ctx.peer() reaches every member (every load/store transport
    // within its domain, a route when every member is near); LL and the
    // peer-pointer direct path need it. A load/store transport maps every PE it
    // reaches, and a team's members are PEs of its world: no member to look at
    // (the loop cost every small call ~0.1 us on one thread, 2xH200).
    PGAS_HD bool all_mapped() const {
        if constexpr (load_store_transport<Tr>) {
            return true;
        } else if constexpr (!peer_pointer_transport<Tr>) {
            return false;
        } else {
            for (int i = 0; i < n; ++i)
                if (ctx.peer(coll_scratch::at<std::uint64_t>(slot_base()), world_pe(i)) == nullptr) return false;
            return true;
        }
    }
};

// Which algorithm a call runs; identical on every member (coll/detail/driver.hpp's choose_path).
struct coll_path {
    bool ll;     // flag-in-data packets through the scratch cells (coll/algorithm/ll.hpp)
    bool peers;  // direct algorithm through ctx.peer() rather than put/get (coll/algorithm/direct.hpp)
};

// Binds the team to the caller and checks membership, always (a non-member
// would otherwise write into other PEs' scratch).
template <class Tr>
PGAS_HD coll_call<Tr> begin_call(const device::context<Tr>& ctx, team t, const char* name) {
    t = t.bound_to(ctx.my_pe());
    const int me = t.my_pe();
    if (me < 0)
        report(errc::pe_out_of_range, name, ctx.my_pe(), "caller is not a member of the team in slot", t.slot());
    if (t.slot() < 0 || t.slot() >= team::max_slots)
        report(errc::invalid_argument, name, ctx.my_pe(), "team slot outside [0, team::max_slots):", t.slot());
    return coll_call<Tr>{ctx, t, me, t.n_pes(), name, 0};
}

template <class Tr>
PGAS_HD void check_root(const coll_call<Tr>& c, int root) {
    if (!c.t.contains_index(root))
        report(errc::pe_out_of_range, c.name, c.ctx.my_pe(), "root is not a team index: root", root);
}

// Symmetric range of `bytes` at offset: inside the heap's user area (PGAS_CHECKS).
template <class Tr>
PGAS_HD void check_buffer(const coll_call<Tr>& c, std::uint64_t offset, std::uint64_t bytes) {
    if (bytes != 0) check_range(c.ctx, c.name, offset, bytes);
}

// Out-of-place buffers must not overlap; `in_place` is the one source offset
// that is allowed to overlap the destination (the documented in-place form).
template <class Tr>
PGAS_HD void check_overlap(const coll_call<Tr>& c, std::uint64_t dst, std::uint64_t dst_bytes, std::uint64_t src,
                           std::uint64_t src_bytes, std::uint64_t in_place) {
    if (dst_bytes == 0 || src_bytes == 0 || src == in_place) return;
    if (src < dst + dst_bytes && dst < src + src_bytes)
        report(
            errc::invalid_argument, c.name, c.ctx.my_pe(),
            "source and destination overlap without being the in-place form; source minus destination offset (bytes) =",
            (long long)(src - dst));
}

// The PGAS_CHECKS signature of a call: every PE of the team must pass the same.
// It is exchanged over LL packets, so it is checked where LL can run (every
// member mapped, at most coll_scratch::max_ll_pes members). Without
// PGAS_CHECKS, members passing different arguments is undefined behaviour
// (in practice a wait that times out naming the collective, or wrong data).
struct coll_signature {
    std::uint64_t count;
    unsigned kind, op, type, root;

    PGAS_HD std::uint64_t pack() const {
        return (count & ((std::uint64_t{1} << 40) - 1)) | std::uint64_t(kind & 15u) << 40 |
               std::uint64_t(op & 15u) << 44 | std::uint64_t(type & 15u) << 48 | std::uint64_t(root & 0xfffu) << 52;
    }
};

// Names the first field two PEs disagree on, the value here and there.
PGAS_HD inline void report_mismatch(const char* call, int pe, std::uint64_t mine, std::uint64_t theirs, int other) {
    struct field {
        const char* name;
        int shift, bits;
    };
    const field fields[] = {{"count", 0, 40},
                            {"collective", 40, 4},
                            {"reduction op", 44, 4},
                            {"element type", 48, 4},
                            {"root (+1)", 52, 12}};
    for (const field& f : fields) {
        const std::uint64_t mask = (std::uint64_t{1} << f.bits) - 1;
        const std::uint64_t a = (mine >> f.shift) & mask, b = (theirs >> f.shift) & mask;
        if (a == b) continue;
        NV_IF_TARGET(
            NV_IS_HOST,
            (throw_error(errc::collective_mismatch, pe, call,
                         std::string(f.name) + " = " + std::to_string(a) + " here but " + std::to_string(b) +
                             " on team PE " + std::to_string(other) + " (every member must pass the same arguments)");),
            (printf("pgas: %s on PE %d: %s = %llu here but %llu on team PE %d (%s)\n", call, pe, f.name,
                    (unsigned long long)a, (unsigned long long)b, other, to_string(errc::collective_mismatch));
             __trap();))
    }
}

// --- 8-byte units: the grain of LL packets and of tails ----------------------

PGAS_HD inline std::uint64_t load_unit(const unsigned char* p, std::size_t avail) {
    std::uint64_t v = 0;
    if (avail >= 8 && (reinterpret_cast<std::uintptr_t>(p) & 7u) == 0)
        return *reinterpret_cast<const std::uint64_t*>(p);
    std::memcpy(&v, p, avail < 8 ? avail : 8);
    return v;
}
PGAS_HD inline void store_unit(unsigned char* p, std::uint64_t v, std::size_t avail) {
    if (avail >= 8 && (reinterpret_cast<std::uintptr_t>(p) & 7u) == 0) {
        *reinterpret_cast<std::uint64_t*>(p) = v;
        return;
    }
    std::memcpy(p, &v, avail < 8 ? avail : 8);
}

// The elements of one 8-byte unit, reduced lane by lane.
template <class T>
struct unit_lanes {
    static constexpr int lanes = 8 / sizeof(T);
    T v[lanes];
};
template <class T, class Op>
PGAS_HD inline std::uint64_t reduce_units(std::uint64_t a, std::uint64_t b, Op op) {
    unit_lanes<T> x, y;
    std::memcpy(&x, &a, 8);
    std::memcpy(&y, &b, 8);
    for (int i = 0; i < unit_lanes<T>::lanes; ++i) x.v[i] = op(x.v[i], y.v[i]);
    std::memcpy(&a, &x, 8);
    return a;
}

PGAS_HD inline std::size_t min_size(std::size_t a, std::size_t b) { return a < b ? a : b; }

// a / b, by a 32-bit division where both fit (every LL call's sizes do): the GPU has no 64-bit divide, and the
// subroutine that stands for one sits in the chain before a small call's first store (slices, chunk counts).
PGAS_HD constexpr std::uint64_t divide(std::uint64_t a, std::uint64_t b) {
    return ((a | b) >> 32) == 0 ? std::uint64_t(std::uint32_t(a) / std::uint32_t(b)) : a / b;
}

// Slice q of [0, count) when n members split it: boundaries on multiples of
// 16 bytes' worth of elements, so every slice but the last starts 16-byte aligned.
template <class T>
struct slice {
    std::size_t begin, size;
};
template <class T>
PGAS_HD inline slice<T> slice_of(std::size_t count, int n, int q) {
    constexpr std::size_t grain = sizeof(T) >= 16 ? 1 : 16 / sizeof(T);
    const std::size_t per = divide(count + std::size_t(n) - 1, std::size_t(n));
    const std::size_t step = (per + grain - 1) / grain * grain;
    const std::size_t begin = min_size(std::size_t(q) * step, count);
    return {begin, min_size(step, count - begin)};
}

// Whether every pointer is 16-byte aligned (the vector path of the direct reductions).
PGAS_HD inline bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

}  // namespace detail
PGAS_NAMESPACE_END
