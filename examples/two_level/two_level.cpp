// A two-level program over pgas::route<Near, Far>: PEs of one node reach each other through a fast near transport
// (here the host transport's shared memory), all others through a network transport (here libfabric). The program
// is a hand-written hierarchical allreduce: members hand their vector to their node's leader over the near path,
// only the leaders exchange node sums over the far path, and each leader hands the total back to its members.
// It then does the same with pgas::allreduce on the route and checks both against the closed-form sum.
//
//   pgasrun -n 4 ./two_level [near_pes]
//       near_pes: PEs per "node" (default: the PEs that really share this host, route_node_pes). On one machine,
//       `two_level 2` pretends that PEs {0,1} and {2,3} are two nodes, so the far path is exercised for real.
//       The provider is PGAS_FI_PROVIDER's (e.g. shm, or "tcp;ofi_rxm" with PGAS_FI_IFACE=lo), else the best found.
//
// Each call below names only its target PE: route sends it through Near when the target is in this PE's near
// range and through Far otherwise, both paths inlined, no transport named in the algorithm. The same body would
// run in a GPU kernel on route<nvlink, libfabric> (world::init_gpu, route_context<pgas::nvlink>); that needs a
// libfabric built with CUDA (FI_HMEM) to expose GPU heaps to the far path, so this example runs on the host.
#include <pgas/pgas.hpp>
#include <pgas/host/libfabric/domain.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

using value_t = long long;

struct two_level_buffers {
    pgas::symmetric_ptr<value_t> src;          // count: this PE's contribution
    pgas::symmetric_ptr<value_t> from_members; // near_pes * count: at a leader, each member's src (slot = index in node)
    pgas::symmetric_ptr<value_t> node_sum;     // count: at a leader, the sum over its node
    pgas::symmetric_ptr<value_t> from_leaders; // n_nodes * count: at a leader, every node's sum (slot = node)
    pgas::symmetric_ptr<value_t> result;       // count: the hand-written allreduce's result
    pgas::symmetric_ptr<value_t> library;      // count: pgas::allreduce's result
    pgas::symmetric_ptr<std::uint64_t> arrived;  // [0] members in, [1] leaders in, [2] total back from the leader
    int count;
};

// Run by every thread of group G (here the process's one thread; pgas::block in a GPU kernel). Nodes are the
// consecutive blocks of `near.count` PEs; a node's leader is its first PE.
template <class G, class Transport>
PGAS_HD void two_level_allreduce(const pgas::device::context<Transport>& ctx, const two_level_buffers& b,
                                 pgas::pe_range near) {
    const int me = ctx.my_pe(), per_node = near.count, n_nodes = ctx.n_pes() / per_node;
    const int leader = near.first, my_node = me / per_node, index = me - leader;
    const std::size_t count = std::size_t(b.count);
    const auto members_in = b.arrived, leaders_in = b.arrived + 1, total_back = b.arrived + 2;
    if (me != leader) {
        // 1. Near: my vector into my slot at the leader, then wait for the total it hands back.
        pgas::put_signal<G>(ctx, b.from_members + index * b.count, ctx.local(b.src), count, members_in, 1,
                            pgas::signal_op::add, leader);
        pgas::signal_wait_until(ctx, total_back, pgas::cmp::eq, std::uint64_t(1));
        return;
    }
    // 1. Near, at the leader: add up the node once every member's vector is in.
    pgas::signal_wait_until(ctx, members_in, pgas::cmp::eq, std::uint64_t(per_node - 1));
    value_t* node_sum = ctx.local(b.node_sum);
    for (std::size_t i = G::rank(); i < count; i += G::size()) {
        value_t sum = ctx.local(b.src)[i];
        for (int m = 1; m < per_node; ++m) sum += ctx.local(b.from_members)[std::size_t(m) * count + i];
        node_sum[i] = sum;
    }
    G::sync();
    // 2. Far: only the leaders talk across nodes, one message per pair of nodes (not per pair of PEs).
    for (int node = 0; node < n_nodes; ++node)
        pgas::put_signal<G>(ctx, b.from_leaders + my_node * b.count, node_sum, count, leaders_in, 1,
                            pgas::signal_op::add, node * per_node);
    pgas::signal_wait_until(ctx, leaders_in, pgas::cmp::eq, std::uint64_t(n_nodes));
    value_t* result = ctx.local(b.result);
    for (std::size_t i = G::rank(); i < count; i += G::size()) {
        value_t sum = 0;
        for (int node = 0; node < n_nodes; ++node) sum += ctx.local(b.from_leaders)[std::size_t(node) * count + i];
        result[i] = sum;
    }
    G::sync();
    // 3. Near: the total back to the members.
    for (int m = 1; m < per_node; ++m)
        pgas::put_signal<G>(ctx, b.result, result, count, total_back, 1, pgas::signal_op::set, leader + m);
}

int main(int argc, char** argv) {
    try {
        auto w = pgas::world::init();  // one PE per process, the node's heaps in shared memory (host transport)
        const int me = w.my_pe(), n_pes = w.n_pes();
        pgas::libfabric_domain fabric(w);  // collective: endpoints, registered heaps, a proxy thread per PE
        // This PE's near range: the PEs of its node, or consecutive blocks of argv[1] PEs.
        pgas::pe_range near = pgas::route_node_pes(w);
        if (argc > 1) {
            const int per_node = std::atoi(argv[1]);
            if (per_node < 1 || n_pes % per_node != 0) {
                std::fprintf(stderr, "two_level: %d PEs do not split into nodes of %d\n", n_pes, per_node);
                return 2;
            }
            near = pgas::pe_range{me / per_node * per_node, per_node};
        }
        // device::context<pgas::route<pgas::host, pgas::libfabric>>: near PEs through shared memory, others libfabric.
        const auto ctx = pgas::route_context<pgas::host>(w, fabric.context(), near);
        if (me == 0)
            std::printf("%d PEs, nodes of %d: near path shared memory, far path libfabric (%s)\n", n_pes, near.count,
                        fabric.provider().c_str());

        two_level_buffers b;
        b.count = 1000;
        b.src = w.alloc<value_t>(b.count);  // collective: the same symmetric_ptr in every process
        b.from_members = w.alloc<value_t>(near.count * b.count);
        b.node_sum = w.alloc<value_t>(b.count);
        b.from_leaders = w.alloc<value_t>(n_pes / near.count * b.count);
        b.result = w.alloc<value_t>(b.count);
        b.library = w.alloc<value_t>(b.count);
        b.arrived = w.alloc<std::uint64_t>(3);
        for (int i = 0; i < b.count; ++i) ctx.local(b.src)[i] = value_t(me + 1) * 1000 + i;
        w.barrier();  // every src filled before anyone reads it

        // This process's thread is its PE: it calls the device-side code directly.
        two_level_allreduce<pgas::block>(ctx, b, near);
        pgas::allreduce(ctx, ctx.world_team(), b.library, b.src, std::size_t(b.count), pgas::op::sum);

        int wrong = 0;
        const value_t pes_sum = value_t(n_pes) * (n_pes + 1) / 2 * 1000;
        for (int i = 0; i < b.count; ++i) {
            const value_t want = pes_sum + value_t(n_pes) * i;
            for (const value_t got : {ctx.local(b.result)[i], ctx.local(b.library)[i]})
                if (got != want && wrong++ < 3)
                    std::fprintf(stderr, "two_level: PE %d: element %d = %lld, expected %lld\n", me, i, got, want);
        }
        std::printf("PE %d (node %d, %s): hand-written two-level allreduce and pgas::allreduce %s\n", me,
                    me / near.count, me == near.first ? "leader" : "member", wrong == 0 ? "match" : "WRONG");
        pgas::quiet(ctx);
        w.barrier();  // nobody tears down while a peer may still target it
        return wrong == 0 ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "two_level: %s\n", e.what());
        return 1;
    }
}
