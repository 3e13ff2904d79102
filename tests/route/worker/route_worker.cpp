// One process of a 4-PE route<host, libfabric> world (started by pgasrun): every op to a near and a far peer, checked.
//
//   pgasrun -n 4 pgas_route_worker <provider>     ("tcp+ofi_rxm" for tcp;ofi_rxm)
//
// Near pairs {0,1} and {2,3} reach each other through the host transport
// (the node's shared-memory heap); PE p reaches p ^ 1 near and (p + 2) % 4
// far, through libfabric. The checks themselves are route_checks.hpp's (the
// GPU twin, route_gpu_worker.cpp with its two kernel files, runs them in kernels); this file adds the
// host-side ones (route_node_pes, PGAS_NODE_SIZE, route_context's errors).
// Exits non-zero with "route worker: ..." on a wrong value or an error.
#include <pgas/pgas.hpp>
#include <pgas/host/libfabric/domain.hpp>
#include <pgas/host/route/context.hpp>

#include "route_checks.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

namespace {

int failures = 0;
const char* path_name[2] = {"near", "far"};

void expect(bool ok, const char* what, int me, int k, unsigned long long got, unsigned long long want) {
    if (ok) return;
    ++failures;
    std::fprintf(stderr, "route worker: PE %d: %s (%s peer): got %llu, expected %llu\n", me, what, path_name[k], got,
                 want);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: pgas_route_worker <provider>\n");
        return 2;
    }
    try {
        pgas::world_options wo;
        wo.heap_bytes = std::uint64_t{32} << 20;
        auto w = pgas::world::init(wo);
        if (w.n_pes() != 4) {
            std::fprintf(stderr, "route worker: needs 4 PEs, got %d\n", w.n_pes());
            return 2;
        }
        pgas::libfabric_options fo;
        fo.provider = argv[1];
        for (char& c : fo.provider)
            if (c == '+') c = ';';
        fo.iface = "lo";
        pgas::libfabric_domain fabric(w, fo);
        const int me = w.my_pe();
        const auto ctx = pgas::route_context<pgas::host>(w, fabric.context(), pgas::pe_range{me / 2 * 2, 2});
        static_assert(std::is_same_v<decltype(ctx), const pgas::device::context<pgas::route<pgas::host, pgas::libfabric>>>);
        const auto host_ctx = w.context<pgas::host>();
        const auto far_ctx = fabric.context();
        const int target[2] = {me ^ 1, (me + 2) % 4};
        // The node's PEs (all four here) and the factory's checks.
        const pgas::pe_range node = pgas::route_node_pes(w);
        expect(node.first == 0 && node.count == 4, "route_node_pes", me, 0, (unsigned long long)node.count, 4);
        // PGAS_NODE_SIZE splits the host into virtual nodes of consecutive PEs; a bad value is refused.
        setenv("PGAS_NODE_SIZE", "2", 1);
        const pgas::pe_range pair = pgas::route_node_pes(w);
        expect(pair.first == me / 2 * 2 && pair.count == 2, "route_node_pes with PGAS_NODE_SIZE=2", me, 0,
               (unsigned long long)pair.first, (unsigned long long)(me / 2 * 2));
        setenv("PGAS_NODE_SIZE", "5", 1);
        try {
            (void)pgas::route_node_pes(w);
            expect(false, "PGAS_NODE_SIZE=5 in a world of 4 accepted", me, 0, 0, 1);
        } catch (const pgas::error& e) {
            expect(std::string(e.what()).find("PGAS_NODE_SIZE on PE") != std::string::npos &&
                       std::string(e.what()).find("expected PEs per node in [1, 4], got '5'") != std::string::npos,
                   "PGAS_NODE_SIZE=5's error names the variable and value", me, 0, 0, 1);
        }
        unsetenv("PGAS_NODE_SIZE");
        try {
            (void)pgas::route_context<pgas::host>(w, fabric.context(), pgas::pe_range{3, 2});
            expect(false, "route_context with near PEs beyond the world", me, 0, 0, 1);
        } catch (const pgas::error& e) {
            expect(e.code() == pgas::errc::pe_out_of_range, "route_context's error code", me, 0, int(e.code()),
                   int(pgas::errc::pe_out_of_range));
        }
        expect(ctx.transport.is_near(target[0]) && !ctx.transport.is_near(target[1]), "near range", me, 0, 0, 1);
        expect(ctx.peer(pgas::symmetric_ptr<int>{}, target[0]) != nullptr &&
                   ctx.peer(pgas::symmetric_ptr<int>{}, target[1]) == nullptr,
               "ctx.peer is Near's pointer for near peers only", me, 0, 1, 0);
        expect(ctx.transport.near_address(0, target[0]) != nullptr && ctx.transport.near_address(0, target[1]) == nullptr,
               "near_address", me, 1, 0, 1);

        // Every op on both paths, byte for byte (route_checks.hpp: the same checks run in kernels on route<nvlink, libfabric>).
        static_assert(std::is_same_v<pgas::coll::resolve_policy<pgas::coll::automatic, pgas::route<pgas::host, pgas::libfabric>>,
                                     pgas::coll::load_store_policy>);
        unsigned wrong = 0;
        std::vector<std::uint8_t> scratch(route_checks::scratch_bytes);
        route_checks::buffers b = route_checks::allocate(w);
        b.column = w.split_2d(w.team_world(), 2).second;
        b.scratch = scratch.data();
        b.failures = &wrong;
        route_checks::run_all(ctx, host_ctx, far_ctx, b);
        failures += int(wrong);
        pgas::quiet(far_ctx);
        w.barrier();
        if (failures == 0)
            std::printf("route worker: PE %d of 4 ok on %s (near PEs %d-%d)\n", me, fabric.provider().c_str(),
                        ctx.transport.near_pes().first,
                        ctx.transport.near_pes().first + ctx.transport.near_pes().count - 1);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "route worker: %s\n", e.what());
        return 1;
    }
    return failures == 0 ? 0 : 1;
}
