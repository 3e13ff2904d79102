// Choosing a libfabric provider: hints, the checks each candidate must pass, and the error that lists them.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/host/env.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

PGAS_NAMESPACE_BEGIN

/// How pgas::libfabric_domain sets itself up; empty strings read the environment.
struct libfabric_options {
    std::string provider;                ///< "" reads PGAS_FI_PROVIDER; still "": the best that passes the checks
    std::string iface;                   ///< "" reads PGAS_FI_IFACE: pins the provider's domain (network interface)
    std::uint32_t ring_capacity = 1024;  ///< commands per ring (a power of two); the PE has one ring per channel
    /// Proxy rings per PE, one per channel (device::context::on_channel), all drained by the PE's one proxy thread;
    /// in [1, pgas::max_channels]; 0: the world's (world_options::channels, PGAS_CHANNELS; default 1).
    int channels = 0;
    int proxy_cpu = -1;                            ///< pin each proxy thread here (-1: no pinning; CI shares 2 cores)
    std::int64_t proxy_yield_after_idle_ns = 500;  ///< an idle proxy thread yields its core this often (-1: never)
    std::size_t bounce_chunk_bytes = std::size_t{256} << 10;  ///< staging buffers (GPU memory, FI_MR_LOCAL)
    /// Staging buffers per PE (each bounce_chunk_bytes).
    std::uint32_t bounce_chunks = 16;
    /// Stage every local buffer outside the heap through the bounce buffers,
    /// as FI_MR_LOCAL providers and GPU memory need (lets CI exercise that path).
    bool stage_local_buffers = false;
    /// How a put's remote visibility (what quiet waits for) is learnt; "" reads
    /// PGAS_FI_PUT_DELIVERY, still "": "flush" on shm, "complete" elsewhere.
    ///   "complete": every write asks for FI_DELIVERY_COMPLETE (on shm that is
    ///               its SAR protocol: one round trip through the target per put).
    ///   "flush":    puts up to the provider's inject_size go out with
    ///               fi_inject_write (no completion, no per-put round trip); an
    ///               ordered read posted after them (an fi_read, or a fetching
    ///               atomic where atomics are ordered with RMA too, or a
    ///               delivery-complete write to that PE) completing confirms
    ///               them. Needs FI_ORDER_RMA_RAW|FI_ORDER_RMA_WAW. Inject errors are not reported by providers, so
    ///               the proxy checks each injected put's range itself.
    std::string put_delivery;
    /// Kernels push into the rings although the heap is host memory (a GPU
    /// heap implies it): rings and staging in mapped pinned memory of the CUDA
    /// device current at construction, the heap registered for kernels.
    bool gpu_producers = false;
    /// Adjacent small puts to one PE (consecutive commands, contiguous remote
    /// ranges, e.g. a warp's lanes writing consecutive words) leave as one
    /// write of up to this many bytes (0: never merge).
    std::size_t coalesce_bytes = 4096;
};

/// How the symmetric heap's bytes meet the fabric (libfabric_domain::heap_path()).
enum class libfabric_heap_path {
    host,    ///< host PEs over a host heap: the provider reads and writes it as any host memory
    staged,  ///< kernels drive the proxy over a host heap (libfabric_options::gpu_producers): the heap is
             ///< host memory; GPU buffers outside it go through pinned bounce buffers (cudaMemcpy by the proxy)
    hmem,    ///< a GPU heap registered with FI_HMEM (FI_HMEM_CUDA): the provider reads and writes GPU memory
             ///< itself; no pgas copy for anything inside the heap
};

/// "hmem", "staged" or "host".
inline const char* to_string(libfabric_heap_path path) {
    return path == libfabric_heap_path::hmem ? "hmem" : path == libfabric_heap_path::staged ? "staged" : "host";
}

namespace ofi {

inline constexpr std::uint32_t api_version = FI_VERSION(1, 10);

// "fi_write (Connection refused)": the call and libfabric's text for rc.
inline std::string describe(const char* call, long rc) {
    return std::string(call) + " returned " + std::to_string(rc) + " (" + fi_strerror(int(-rc)) + ")";
}

[[noreturn]] inline void fail(errc code, int pe, const char* call, const std::string& detail) {
    pgas::detail::throw_error(code, pe, call, detail);
}

inline void check(long rc, int pe, const char* call, const char* what) {
    if (rc != 0)
        fail(errc::transport_unavailable, pe, "libfabric_domain", std::string(what) + ": " + describe(call, rc));
}

struct info_deleter {
    void operator()(fi_info* p) const { fi_freeinfo(p); }
};
using info_ptr = std::unique_ptr<fi_info, info_deleter>;

// Every (op, datatype, kind) the proxy may post. kind: 0 fi_atomic, 1
// fi_fetch_atomic, 2 fi_compare_atomic (the flags of fi_query_atomic).
struct atomic_need {
    fi_op op;
    fi_datatype type;
    int kind;
};
inline std::vector<atomic_need> atomic_needs() {
    std::vector<atomic_need> needs;
    const fi_datatype all[] = {FI_INT32, FI_UINT32, FI_INT64, FI_UINT64, FI_FLOAT, FI_DOUBLE};
    for (fi_datatype t : all) {
        const bool integer = t != FI_FLOAT && t != FI_DOUBLE;
        needs.push_back({FI_ATOMIC_WRITE, t, 0});
        needs.push_back({FI_ATOMIC_READ, t, 1});
        needs.push_back({FI_ATOMIC_WRITE, t, 1});
        needs.push_back({FI_SUM, t, 1});
        needs.push_back({FI_CSWAP, t, 2});
        if (integer)
            for (fi_op op : {FI_BAND, FI_BOR, FI_BXOR}) needs.push_back({op, t, 1});
    }
    needs.push_back({FI_SUM, FI_UINT64, 0});  // signal add
    return needs;
}

inline const char* kind_name(int kind) { return kind == 0 ? "atomic" : kind == 1 ? "fetch_atomic" : "compare_atomic"; }

// Asks `query(op, type, flags)` (fi_query_atomic on an open domain, or a
// fake in tests) about every atomic the proxy needs, and says which are not
// really implemented: a provider may advertise FI_ATOMIC and still answer
// -FI_ENOSYS (the `net` provider of libfabric 1.17 does). "" when all work.
inline std::string atomic_problems(const std::function<int(fi_op, fi_datatype, std::uint64_t)>& query) {
    std::string problems;
    int count = 0;
    for (const atomic_need& need : atomic_needs()) {
        const std::uint64_t flags = need.kind == 1 ? FI_FETCH_ATOMIC : need.kind == 2 ? FI_COMPARE_ATOMIC : 0;
        const int rc = query(need.op, need.type, flags);
        if (rc == 0) continue;
        if (count++ < 3) {
            if (!problems.empty()) problems += ", ";
            // fi_tostr_r, not fi_tostr: fi_tostr writes one static buffer of libfabric's, and every PE thread of
            // a process checks its providers at once (ThreadSanitizer saw two PE threads writing it).
            char op[64], type[64];
            fi_tostr_r(op, sizeof op, &need.op, FI_TYPE_ATOMIC_OP);
            fi_tostr_r(type, sizeof type, &need.type, FI_TYPE_ATOMIC_TYPE);
            problems += std::string(kind_name(need.kind)) + " " + op + " on " + type + ": " + fi_strerror(-rc);
        }
    }
    if (count > 3) problems += " and " + std::to_string(count - 3) + " more";
    return count ? "atomics advertised but not implemented (" + problems + ")" : std::string();
}

// The hints every candidate is asked with: RDM, RMA and atomics, the modern
// mr_mode bits pgas honours (never FI_MR_BASIC/SCALABLE), delivery-complete
// transmit completions (quiet needs remote visibility), and the
// fi_context2 every operation carries.
inline info_ptr make_hints(bool want_hmem) {
    info_ptr hints(fi_allocinfo());
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    if (want_hmem) hints->caps |= FI_HMEM;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT |
                                  (want_hmem ? FI_MR_HMEM : 0);
    hints->domain_attr->threading = FI_THREAD_DOMAIN;  // only the proxy thread touches the domain
    hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
    return hints;
}

// Whether provider `name` offers pgas's endpoints with FI_HMEM (can register a GPU heap).
inline bool provider_has_hmem(const std::string& name) {
    info_ptr hints = make_hints(true);
    fi_info* raw = nullptr;
    if (fi_getinfo(api_version, nullptr, nullptr, 0, hints.get(), &raw) != 0) return false;
    info_ptr found(raw);
    for (fi_info* i = found.get(); i; i = i->next)
        if (name == i->fabric_attr->prov_name) return true;
    return false;
}

// The orderings the "flush" delivery relies on. rma_order: an RMA read
// posted after RMA writes to a PE is processed after them (RAW) and writes
// stay in order (WAW), so an fi_read confirms earlier injected writes.
// full_order, FI_ORDER_RAW|FI_ORDER_WAW, spans RMA and atomics too: a
// fetching atomic confirms them and a signal's atomic lands after the data
// written before it. shm grants full_order when asked; tcp;ofi_rxm grants
// only the RMA (and atomic-to-atomic) orders.
inline constexpr std::uint64_t full_order = FI_ORDER_RAW | FI_ORDER_WAW;
inline constexpr std::uint64_t rma_order = FI_ORDER_RMA_RAW | FI_ORDER_RMA_WAW;
inline bool has_order(const fi_info* info, std::uint64_t order) { return (info->tx_attr->msg_order & order) == order; }
inline bool has_rma_order(const fi_info* info) { return has_order(info, full_order) || has_order(info, rma_order); }

// `chosen` again, asked for full_order (else rma_order) in its tx/rx
// msg_order, when the provider grants it (null otherwise). Asking matters on
// shm: without an RMA ordering request it writes and reads through
// process_vm_writev/readv from the initiator (a syscall per operation).
inline info_ptr ordered_variant(const fi_info* chosen, bool want_hmem) {
    const std::string name = chosen->fabric_attr->prov_name;
    const std::string domain = chosen->domain_attr->name ? chosen->domain_attr->name : "";
    for (std::uint64_t order : {full_order, rma_order}) {
        info_ptr hints = make_hints(want_hmem);
        hints->tx_attr->msg_order = order;
        hints->rx_attr->msg_order = order;
        fi_info* raw = nullptr;
        if (fi_getinfo(api_version, nullptr, nullptr, 0, hints.get(), &raw) != 0) continue;
        info_ptr found(raw);
        for (fi_info* i = found.get(); i; i = i->next) {
            if (name != i->fabric_attr->prov_name) continue;
            if (domain != (i->domain_attr->name ? i->domain_attr->name : "")) continue;
            if (!has_order(i, order)) continue;
            return info_ptr(fi_dupinfo(i));
        }
    }
    return nullptr;
}

// Whether puts use the "flush" delivery (libfabric_options::put_delivery) on
// endpoint `info`; throws when it is asked for and the provider cannot.
inline bool flush_delivery(const libfabric_options& options, const fi_info* info, int pe) {
    const std::string asked =
        !options.put_delivery.empty() ? options.put_delivery : pgas::detail::env("PGAS_FI_PUT_DELIVERY").value_or("");
    const std::string name = info->fabric_attr->prov_name;
    const bool ordered = has_rma_order(info);
    const bool can = ordered && info->tx_attr->inject_size >= 8;
    if (asked.empty()) return can && name == "shm";
    if (asked == "complete") return false;
    if (asked != "flush")
        fail(errc::invalid_argument, pe, "libfabric_domain",
             "put delivery '" + asked + "' (PGAS_FI_PUT_DELIVERY) is neither \"complete\" nor \"flush\"");
    if (!can)
        fail(errc::transport_unavailable, pe, "libfabric_domain",
             "put delivery \"flush\" needs FI_ORDER_RMA_RAW|FI_ORDER_RMA_WAW and an inject size of at least 8 bytes; "
             "provider " +
                 name +
                 (ordered ? " injects " + std::to_string(info->tx_attr->inject_size) + " bytes" +
                                ((info->caps & FI_HMEM) ? " with FI_HMEM (a GPU heap)" : "")
                          : std::string(" does not grant that ordering")));
    return true;
}

// Preference among providers that pass (lower is better): NICs first, then
// shared memory when every PE is on one host, then TCP.
inline int rank(const std::string& name, bool single_host) {
    static const char* const order[] = {"cxi", "efa", "verbs;ofi_rxm", "psm3", "opx", "psm2"};
    for (int i = 0; i < int(sizeof(order) / sizeof(order[0])); ++i)
        if (name == order[i]) return i;
    if (name == "shm") return single_host ? 10 : 1000;
    if (name == "tcp;ofi_rxm") return 20;
    if (name == "tcp") return 21;
    if (name == "sockets") return 30;
    return 40;
}

struct rejection {
    std::string provider, reason;
};

// Opens a fabric and domain for `info` and checks the atomics there.
inline std::string check_candidate(fi_info* info) {
    fid_fabric* fabric = nullptr;
    fid_domain* domain = nullptr;
    std::string problem;
    if (int rc = fi_fabric(info->fabric_attr, &fabric, nullptr); rc != 0) return describe("fi_fabric", rc);
    if (int rc = fi_domain(fabric, info, &domain, nullptr); rc != 0) {
        problem = describe("fi_domain", rc);
    } else {
        problem = atomic_problems([&](fi_op op, fi_datatype type, std::uint64_t flags) {
            fi_atomic_attr attr{};
            return fi_query_atomic(domain, type, op, &attr, flags);
        });
        fi_close(&domain->fid);
    }
    fi_close(&fabric->fid);
    return problem;
}

// The best candidate in `found` that passes the checks (the first that does when `wanted` names one), or null;
// every candidate refused is added to `rejected` with its reason.
inline fi_info* best_candidate(fi_info* found, const std::string& wanted, const std::string& iface, bool single_host,
                               std::vector<rejection>& rejected) {
    std::vector<std::string> seen;
    fi_info* best = nullptr;
    int best_rank = 1 << 30;
    for (fi_info* i = found; i; i = i->next) {
        const std::string name = i->fabric_attr->prov_name;
        const std::string domain = i->domain_attr->name ? i->domain_attr->name : "";
        if (!wanted.empty() && name != wanted) continue;
        bool done = false;
        for (auto& s : seen) done |= s == name;
        if (done) continue;
        if (!iface.empty() && name != "shm" && domain != iface) continue;  // a later entry may match
        seen.push_back(name);
        if (name == "shm" && !single_host) {
            rejected.push_back({name, "the PEs span several hosts"});
            continue;
        }
        if (const std::string problem = check_candidate(i); !problem.empty()) {
            rejected.push_back({name, problem});
            continue;
        }
        const int r = rank(name, single_host);
        if (r < best_rank) best = i, best_rank = r;
        if (!wanted.empty()) break;
    }
    return best;
}

// Nothing passed: throws errc::transport_unavailable saying what exists and why each one is unusable.
[[noreturn]] inline void fail_no_provider(const fi_info* found, const std::vector<rejection>& rejected,
                                          const std::string& wanted, const std::string& iface, bool want_hmem, int pe) {
    info_ptr basic(fi_allocinfo());
    basic->ep_attr->type = FI_EP_RDM;
    fi_info* all_raw = nullptr;
    info_ptr all(fi_getinfo(api_version, nullptr, nullptr, 0, basic.get(), &all_raw) == 0 ? all_raw : nullptr);
    // A GPU heap: which providers pass every check but FI_HMEM (they cannot register GPU memory).
    fi_info* plain_raw = nullptr;
    info_ptr plain;
    if (want_hmem && fi_getinfo(api_version, nullptr, nullptr, 0, make_hints(false).get(), &plain_raw) == 0)
        plain.reset(plain_raw);
    auto lacks_only_hmem = [&](const std::string& name) {
        for (fi_info* p = plain.get(); p; p = p->next)
            if (name == p->fabric_attr->prov_name) return true;
        return false;
    };
    bool any_lacks_only_hmem = false;
    std::string listing;
    std::vector<std::string> listed;
    auto add = [&](const std::string& name, const std::string& reason) {
        for (auto& l : listed)
            if (l == name) return;
        listed.push_back(name);
        listing += "\n  " + name + ": " + reason;
    };
    for (auto& r : rejected) add(r.provider, r.reason);
    for (fi_info* i = all.get(); i; i = i->next) {
        const std::string name = i->fabric_attr->prov_name;
        const std::string domain = i->domain_attr->name ? i->domain_attr->name : "";
        bool full = false, iface_ok = false;
        for (const fi_info* f = found; f; f = f->next)
            if (name == f->fabric_attr->prov_name) {
                full = true;
                iface_ok |= iface.empty() || name == "shm" || (f->domain_attr->name && iface == f->domain_attr->name);
            }
        if (!wanted.empty() && name != wanted)
            add(name, "not PGAS_FI_PROVIDER=" + wanted);
        else if (!full && lacks_only_hmem(name)) {
            any_lacks_only_hmem = true;
            add(name, "has no FI_HMEM: it cannot register GPU memory");
        } else if (!full)
            add(name, "lacks FI_RMA+FI_ATOMIC with delivery-complete RDM endpoints and modern mr_mode" +
                          std::string(want_hmem ? " and FI_HMEM" : ""));
        else if (!iface_ok)
            add(name, "no domain on PGAS_FI_IFACE=" + iface + " (has " + domain + ")");
    }
    std::string head = (wanted.empty() ? "no libfabric provider passes pgas's checks"
                                       : "provider '" + wanted + "' (PGAS_FI_PROVIDER) is not usable") +
                       std::string(want_hmem ? " for a GPU heap" : "");
    if (!wanted.empty() && std::find(listed.begin(), listed.end(), wanted) == listed.end())
        head = "provider '" + wanted + "' (PGAS_FI_PROVIDER) was not found";
    std::string advice;
    if (want_hmem && any_lacks_only_hmem)
        advice =
            "\n  The heap is GPU memory, which the proxy reaches only through a provider with FI_HMEM (a libfabric "
            "built with CUDA, as scripts/build-libfabric-cuda makes: shm on one host; verbs, efa or cxi across hosts). "
            "Without one, keep the heap in host memory and let kernels drive the proxy "
            "(world::init or run_threads with libfabric_options::gpu_producers): GPU buffers are then staged "
            "through pinned host memory.";
    fail(errc::transport_unavailable, pe, "libfabric_domain",
         head + "; providers found:" + (listing.empty() ? std::string(" none") : listing) + advice);
}

// The provider this PE uses: PGAS_FI_PROVIDER / options.provider if it
// passes, else the best that passes. Throws errc::transport_unavailable
// listing every provider found and why each was rejected.
inline info_ptr select_provider(const libfabric_options& options, bool single_host, bool want_hmem, int pe) {
    const std::string wanted =
        !options.provider.empty() ? options.provider : pgas::detail::env("PGAS_FI_PROVIDER").value_or("");
    const std::string iface = !options.iface.empty() ? options.iface : pgas::detail::env("PGAS_FI_IFACE").value_or("");

    info_ptr hints = make_hints(want_hmem);
    fi_info* raw = nullptr;
    const int rc = fi_getinfo(api_version, nullptr, nullptr, 0, hints.get(), &raw);
    info_ptr found(rc == 0 ? raw : nullptr);

    std::vector<rejection> rejected;
    if (fi_info* best = best_candidate(found.get(), wanted, iface, single_host, rejected)) {
        if (info_ptr ordered = ordered_variant(best, want_hmem)) return ordered;
        return info_ptr(fi_dupinfo(best));
    }
    fail_no_provider(found.get(), rejected, wanted, iface, want_hmem, pe);
}

}  // namespace ofi
PGAS_NAMESPACE_END
