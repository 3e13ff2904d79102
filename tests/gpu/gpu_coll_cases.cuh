// The on-stream collective x dtype x op x team x size cases over the NVLink transport, checked bit-exactly against
// the host reference that the host-transport suite uses too (tests/common/coll_cases.hpp). gpu_coll_test.cu holds
// the test cases; each gpu_coll_<part>.cu instantiates one part of the sweep, so that the parts compile in parallel
// (one translation unit of all 132 kernels took about 4 minutes on 16 cores, the GPU build's critical path).
#pragma once

#include <pgas/pgas.hpp>
#include <pgas/host/stream/collectives.cuh>

#include "support.cuh"
#include "../common/coll_cases.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace gpu_coll {

using namespace gpu_support;

// ---- element types, ops, values and host references: tests/common/coll_cases.hpp ----

using namespace coll_cases;

// PGAS_GPU_COLL_FEW_TYPES (a compile-time switch for quick local builds) keeps one type per kind.
#ifdef PGAS_GPU_COLL_FEW_TYPES
using all_types = type_list<std::int32_t, __half, float>;
#else
using all_types = coll_cases::all_types;
#endif

// Compile time: every on-stream (collective, dtype, op) is its own kernel, about 1.4 s of nvcc each
// (sm_90, one core). All of them (216 reductions + 36 movements) took 6.5 minutes, so allreduce runs every
// dtype x op, while reduce and reduce_scatter run every dtype with one op each, rotating so that each of them
// still meets every op (on some dtype) and every dtype (with some op): the op is applied by the same device
// code in all three, the data flow of each is checked at every width. 132 kernels, about 3.5 minutes in one
// translation unit: hence the parts below, 12 to 18 kernels each.
template <class T, int type_index, int op_index>
constexpr bool with_reduce = op_index == type_index % n_ops<T>;
template <class T, int type_index, int op_index>
constexpr bool with_reduce_scatter = op_index == (type_index + 3) % n_ops<T>;

// What a case is, for failure messages.
struct case_info {
    const char* collective;
    const char* type;
    const char* op;
    const char* team;
    std::size_t count;
    int shift;
    int root;
    std::string text(int pe) const {
        std::ostringstream out;
        out << collective << " " << type << " " << op << " team=" << team << " count=" << count
            << " shift=" << shift << " root=" << root << " on PE " << pe;
        return out.str();
    }
};

// Compares got (want.size() elements, then `guard_elems` guard elements) with want bit for bit; logs the first
// difference.
template <class T>
void expect_equal(failure_log& log, const case_info& info, int pe, const char* what, const std::vector<T>& got,
                  const std::vector<T>& want, std::size_t guard_elems = guard) {
    for (std::size_t i = 0; i < want.size(); ++i)
        if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {
            log.add(info.text(pe) + ": " + what + "[" + std::to_string(i) + "] = " + show(got[i]) + ", expected " +
                    show(want[i]));
            return;
        }
    const auto* g = reinterpret_cast<const unsigned char*>(got.data() + want.size());
    for (std::size_t i = 0; i < guard_elems * sizeof(T); ++i)
        if (g[i] != guard_byte) {
            log.add(info.text(pe) + ": " + what + " written past its end (guard byte " + std::to_string(i) + ")");
            return;
        }
}

// ---- worlds, buffers, launches (as tests/gpu/gpu_test.cu) ----

// Host copies to and from local PE `local`'s GPU.
template <class T>
void upload(pgas::world& w, pgas::symmetric_ptr<T> p, const std::vector<T>& host, int local) {
    if (host.empty()) return;
    CHECK_CUDA(cudaSetDevice(w.device_of(local)));
    CHECK_CUDA(cudaMemcpy(w.device_address(p, local), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
}
template <class T>
void fill_guard(pgas::world& w, pgas::symmetric_ptr<T> p, std::size_t elements, int local) {
    CHECK_CUDA(cudaSetDevice(w.device_of(local)));
    CHECK_CUDA(cudaMemset(w.device_address(p, local), guard_byte, elements * sizeof(T)));
}
template <class T>
std::vector<T> read_back(pgas::world& w, pgas::symmetric_ptr<T> p, std::size_t count, int local) {
    std::vector<T> out(count);
    CHECK_CUDA(cudaSetDevice(w.device_of(local)));
    CHECK_CUDA(cudaMemcpy(out.data(), w.device_address(p, local), count * sizeof(T), cudaMemcpyDeviceToHost));
    return out;
}

// Every process has filled its buffers before any PE's collective may write a peer's.
inline void inputs_ready(pgas::world& w) {
    for (int i = 0; i < w.n_local_pes(); ++i) {
        CHECK_CUDA(cudaSetDevice(w.device_of(i)));
        CHECK_CUDA(cudaDeviceSynchronize());
    }
    w.barrier();
}

// Runs call(ctx, team bound to the PE, stream) for every local PE that is a member of t, then waits for all
// (every process: results are read only after the peers' kernels are done too).
template <class Call>
void on_members(pgas::world& w, const pgas::team& t, Call call) {
    inputs_ready(w);
    for (int i = 0; i < w.n_local_pes(); ++i) {
        const pgas::team mine = t.bound_to(w.local_pe(i));
        if (!mine.is_member()) continue;
        CHECK_CUDA(cudaSetDevice(w.device_of(i)));
        call(w.context<pgas::nvlink>(i), mine, pe_stream(w, i));
        CHECK_CUDA(cudaGetLastError());
    }
    for (int i = 0; i < w.n_local_pes(); ++i) {
        CHECK_CUDA(cudaSetDevice(w.device_of(i)));
        CHECK_CUDA(cudaDeviceSynchronize());
    }
    w.barrier();
}

// Sizes: 0 (no-op), 1, 3 and 1027 (LL, not multiples of any vector width), 50001 (the multi-block direct
// path: over load_store_policy::ll_max_bytes for every width, several stream_bytes_per_block blocks).
inline const std::vector<std::size_t> counts = {0, 1, 3, 1027, 50001};
constexpr std::size_t largest_count = 50001;

struct buffers {
    pgas::symmetric_ptr<unsigned char> src, dst;
};
inline buffers make_buffers(pgas::world& w) {
    const std::size_t bytes = (std::size_t(w.n_pes()) * (largest_count + 1) + guard + 2) * 8;
    return {w.alloc<unsigned char>(bytes), w.alloc<unsigned char>(bytes)};
}

// ---- reductions: allreduce, reduce (moving root), reduce_scatter; out of place and in place ----

template <class T, bool run_reduce, bool run_reduce_scatter, class Op>
void reduction_cases(pgas::world& w, const teams& ts, const buffers& b, int& round, failure_log& log, Op op) {
    for (int which = 0; which < 2; ++which) {
        const pgas::team& team = which == 0 ? ts.world : ts.strided;
        const int n = team.n_pes();
        for (std::size_t count : counts) {
            for (bool in_place : {false, true}) {
                round += 3;  // every process steps alike: inputs and roots stay in agreement
                const int shift = int(count % 2);  // odd counts also start one element off 16-byte alignment
                const int root = (round / 3) % n;
                case_info info{"", type_name<T>(), Op::name, which == 0 ? "world" : "strided", count, shift, root};
                auto src = pgas::symmetric_cast<T>(b.src) + shift;
                auto dst = pgas::symmetric_cast<T>(b.dst) + shift;

                auto input = [&](int pe, std::size_t elements) {
                    std::vector<T> v(elements);
                    for (std::size_t i = 0; i < elements; ++i) v[i] = reduce_input<T>(pe, i, round, op);
                    return v;
                };
                auto reference = [&](std::size_t block) { return reduced_block<T>(team, block, count, round, op); };
                auto members = [&](auto f) {
                    for (int i = 0; i < w.n_local_pes(); ++i) {
                        const int pe = w.local_pe(i);
                        const int me = team.bound_to(pe).my_pe();
                        if (me >= 0) f(i, pe, me);
                    }
                };

                // allreduce
                info.collective = in_place ? "allreduce(in place)" : "allreduce";
                members([&](int i, int pe, int) {
                    fill_guard(w, dst, count + guard, i);
                    upload(w, in_place ? dst : src, input(pe, count), i);
                });
                on_members(w, team, [&](const ctx_t& c, const pgas::team& t, cudaStream_t s) {
                    pgas::allreduce_on_stream(c, t, dst, in_place ? dst : src, count, op, s);
                });
                members([&](int i, int pe, int) {
                    expect_equal(log, info, pe, "dst", read_back(w, dst, count + guard, i), reference(0));
                });

                // reduce to a root that moves with the round; non-roots' dst stays as it was
                if constexpr (run_reduce) {
                info.collective = in_place ? "reduce(in place)" : "reduce";
                members([&](int i, int pe, int) {
                    fill_guard(w, dst, count + guard, i);
                    upload(w, in_place ? dst : src, input(pe, count), i);
                });
                on_members(w, team, [&](const ctx_t& c, const pgas::team& t, cudaStream_t s) {
                    pgas::reduce_on_stream(c, t, dst, in_place ? dst : src, count, op, root, s);
                });
                members([&](int i, int pe, int me) {
                    std::vector<T> untouched(count);
                    if (in_place) untouched = input(pe, count);
                    else std::memset(static_cast<void*>(untouched.data()), guard_byte, count * sizeof(T));
                    expect_equal(log, info, pe, me == root ? "root dst" : "non-root dst (must be untouched)",
                                 read_back(w, dst, count + guard, i), me == root ? reference(0) : untouched);
                });
                }

                // reduce_scatter: block m of everyone's src, reduced, to member m (in place: into src's block m)
                if constexpr (run_reduce_scatter) {
                info.collective = in_place ? "reduce_scatter(in place)" : "reduce_scatter";
                const std::size_t total = count * std::size_t(n);
                members([&](int i, int pe, int) {
                    fill_guard(w, src, total + guard, i);
                    fill_guard(w, dst, count + guard, i);
                    upload(w, src, input(pe, total), i);
                });
                on_members(w, team, [&](const ctx_t& c, const pgas::team& t, cudaStream_t s) {
                    const auto out = in_place ? src + std::ptrdiff_t(count * std::size_t(t.my_pe())) : dst;
                    pgas::reduce_scatter_on_stream(c, t, out, src, count, op, s);
                });
                members([&](int i, int pe, int me) {
                    if (in_place) {
                        // the whole of src: other blocks keep this PE's input, block me holds the result
                        std::vector<T> want = input(pe, total);
                        const std::vector<T> mine = reference(std::size_t(me));
                        std::copy(mine.begin(), mine.end(), want.begin() + std::ptrdiff_t(count * std::size_t(me)));
                        expect_equal(log, info, pe, "src", read_back(w, src, total + guard, i), want);
                    } else {
                        expect_equal(log, info, pe, "dst", read_back(w, dst, count + guard, i),
                                     reference(std::size_t(me)));
                    }
                });
                }
            }
        }
    }
}

// ---- data movement: broadcast (moving root), allgather, alltoall ----

template <class T>
void movement_cases(pgas::world& w, const teams& ts, const buffers& b, int& round, failure_log& log) {
    for (int which = 0; which < 2; ++which) {
        const pgas::team& team = which == 0 ? ts.world : ts.strided;
        const int n = team.n_pes();
        for (std::size_t count : counts) {
            for (bool in_place : {false, true}) {
                round += 3;
                const int shift = int(count % 2);
                const int root = round % n;
                case_info info{"", type_name<T>(), "-", which == 0 ? "world" : "strided", count, shift, root};
                auto src = pgas::symmetric_cast<T>(b.src) + shift;
                auto dst = pgas::symmetric_cast<T>(b.dst) + shift;
                const std::size_t total = count * std::size_t(n);
                auto values = [&](int pe, std::size_t first, std::size_t elements, int r) {
                    std::vector<T> v(elements);
                    for (std::size_t k = 0; k < elements; ++k) v[k] = raw_value<T>(pe, first + k, r);
                    return v;
                };
                auto members = [&](auto f) {
                    for (int i = 0; i < w.n_local_pes(); ++i) {
                        const int pe = w.local_pe(i);
                        const int me = team.bound_to(pe).my_pe();
                        if (me >= 0) f(i, pe, me);
                    }
                };

                // broadcast
                info.collective = in_place ? "broadcast(in place)" : "broadcast";
                members([&](int i, int pe, int) {
                    fill_guard(w, dst, count + guard, i);
                    upload(w, in_place ? dst : src, values(pe, 0, count, round), i);
                });
                on_members(w, team, [&](const ctx_t& c, const pgas::team& t, cudaStream_t s) {
                    pgas::broadcast_on_stream(c, t, dst, in_place ? dst : src, count, root, s);
                });
                members([&](int i, int pe, int) {
                    expect_equal(log, info, pe, "dst", read_back(w, dst, count + guard, i),
                                 values(team.world_pe(root), 0, count, round));
                });

                // allgather: in place means src is this member's block of dst
                info.collective = in_place ? "allgather(in place)" : "allgather";
                members([&](int i, int pe, int me) {
                    fill_guard(w, dst, total + guard, i);
                    upload(w, in_place ? dst + std::ptrdiff_t(count * std::size_t(me)) : src,
                           values(pe, 0, count, round + 1), i);
                });
                on_members(w, team, [&](const ctx_t& c, const pgas::team& t, cudaStream_t s) {
                    const auto from = in_place ? dst + std::ptrdiff_t(count * std::size_t(t.my_pe())) : src;
                    pgas::allgather_on_stream(c, t, dst, from, count, s);
                });
                members([&](int i, int pe, int) {
                    std::vector<T> want;
                    for (int q = 0; q < n; ++q) {
                        const std::vector<T> part = values(team.world_pe(q), 0, count, round + 1);
                        want.insert(want.end(), part.begin(), part.end());
                    }
                    expect_equal(log, info, pe, "dst", read_back(w, dst, total + guard, i), want);
                });

                // alltoall (no in-place form: the second pass runs it out of place again)
                info.collective = in_place ? "alltoall(again)" : "alltoall";
                members([&](int i, int pe, int) {
                    fill_guard(w, dst, total + guard, i);
                    upload(w, src, values(pe, 0, total, round + 2), i);
                });
                on_members(w, team, [&](const ctx_t& c, const pgas::team& t, cudaStream_t s) {
                    pgas::alltoall_on_stream(c, t, dst, src, count, s);
                });
                members([&](int i, int pe, int me) {
                    std::vector<T> want;  // block q of my dst = block me of member q's src
                    for (int q = 0; q < n; ++q) {
                        const std::vector<T> part =
                            values(team.world_pe(q), count * std::size_t(me), count, round + 2);
                        want.insert(want.end(), part.begin(), part.end());
                    }
                    expect_equal(log, info, pe, "dst", read_back(w, dst, total + guard, i), want);
                });
            }
        }
    }
}

// ---- the parts: each a range [first, last) of all_types, instantiated in its own translation unit ----

// One world's state, shared by the parts that a test case runs in turn.
struct run {
    pgas::world& w;
    const teams& ts;
    const buffers& b;
    int& round;  // every process steps alike: inputs and roots stay in agreement
    failure_log& log;
};

template <int first, int last, class F>
void for_types_in(F&& f) {
    for_each_type(all_types{}, [&](auto tag, auto type_index) {
        if constexpr (decltype(type_index)::value >= first && decltype(type_index)::value < last) f(tag, type_index);
    });
}

template <int first, int last>
void reductions(run& r) {
    for_types_in<first, last>([&](auto tag, auto type_index) {
        using T = typename decltype(tag)::type;
        for_each_op<T>([&](auto op, auto op_index) {
            constexpr int ti = decltype(type_index)::value, oi = decltype(op_index)::value;
            reduction_cases<T, with_reduce<T, ti, oi>, with_reduce_scatter<T, ti, oi>>(r.w, r.ts, r.b, r.round, r.log,
                                                                                        op);
        });
    });
}

template <int first, int last>
void movement(run& r) {
    for_types_in<first, last>([&](auto tag, auto) {
        movement_cases<typename decltype(tag)::type>(r.w, r.ts, r.b, r.round, r.log);
    });
}

// The parts, in the order the test cases run them; gpu_coll_<name>.cu defines each. Named by the types of the
// full list (12 types: 18 or 12 kernels per reduction part, 12 per movement part, ~1.4 s of nvcc each); under
// PGAS_GPU_COLL_FEW_TYPES the same index ranges cover the 3-type list and the later parts are empty.
void reductions_int8_int16(run&);    // types [0, 2)
void reductions_int32_int64(run&);   // types [2, 4)
void reductions_uint8_uint16(run&);  // types [4, 6)
void reductions_uint32_uint64(run&); // types [6, 8)
void reductions_half_bf16(run&);     // types [8, 10)
void reductions_float_double(run&);  // types [10, 12)
void movement_signed(run&);          // types [0, 4)
void movement_unsigned(run&);        // types [4, 8)
void movement_floats(run&);          // types [8, 12)

}  // namespace gpu_coll
