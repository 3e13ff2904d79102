// Compile-time contract of pgas::route<Near, Far>: the concepts it models, its layout and the collectives' policy.
#include "mock_transports.hpp"

#include <pgas/pgas.hpp>
#include <pgas/host/route/context.hpp>

#include <type_traits>

using host_libfabric = pgas::route<pgas::host, pgas::libfabric>;
using nvlink_libfabric = pgas::route<pgas::nvlink, pgas::libfabric>;

// Every capability both sides have, except load/store: far peers are not mapped.
static_assert(pgas::transport<host_libfabric> && pgas::rma_transport<host_libfabric> &&
              pgas::atomic_transport<host_libfabric> && pgas::signal_transport<host_libfabric>);
static_assert(!pgas::load_store_transport<host_libfabric> && !pgas::load_store_transport<nvlink_libfabric>);
static_assert(pgas::rma_transport<nvlink_libfabric> && pgas::atomic_transport<nvlink_libfabric> &&
              pgas::signal_transport<nvlink_libfabric>);

// Passed to kernels by value inside device::context (__grid_constant__).
static_assert(std::is_trivially_copyable_v<host_libfabric> && std::is_trivially_copyable_v<nvlink_libfabric>);
static_assert(std::is_trivially_copyable_v<pgas::device::context<nvlink_libfabric>>);
static_assert(std::is_trivially_copyable_v<pgas::pe_range>);

// The collectives keep their load/store paths on a route for teams of near peers (ctx.peer() is Near's pointer
// there), and take put/get where a member is far.
static_assert(pgas::peer_pointer_transport<host_libfabric> && pgas::peer_pointer_transport<nvlink_libfabric>);
static_assert(std::is_same_v<pgas::coll::resolve_policy<pgas::coll::automatic, host_libfabric>,
                             pgas::coll::load_store_policy>);

// A side without atomics or signals takes them away from the route, not put/get.
using partial = pgas::route<pgas::host, mock::rma_only>;
static_assert(pgas::rma_transport<partial> && !pgas::atomic_transport<partial> && !pgas::signal_transport<partial>);

// Two instances of one transport type are a legitimate route (e.g. libfabric on shm near, tcp far).
static_assert(pgas::rma_transport<pgas::route<pgas::libfabric, pgas::libfabric>>);

// The near range.
static_assert(pgas::pe_range{2, 2}.contains(2) && pgas::pe_range{2, 2}.contains(3));
static_assert(!pgas::pe_range{2, 2}.contains(1) && !pgas::pe_range{2, 2}.contains(4) && !pgas::pe_range{}.contains(0));

int main() {}
