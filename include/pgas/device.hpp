// Device-only umbrella: the core types, the transports' device side, device ops, collectives and expert-parallel
// bodies; no world, no bootstrap.
#pragma once

// For translation units that hold kernels and take their device::context
// from elsewhere: nothing here opens a socket, reads the launch
// environment or starts a thread. pgas/pgas.hpp adds the host side.
#include <pgas/coll/allgather.hpp>
#include <pgas/coll/alltoall.hpp>
#include <pgas/coll/alltoallv.hpp>
#include <pgas/coll/broadcast.hpp>
#include <pgas/coll/ops.hpp>
#include <pgas/coll/reduce.hpp>
#include <pgas/coll/reduce_scatter.hpp>
#include <pgas/coll/tuning.hpp>
#include <pgas/core/config.hpp>
#include <pgas/core/error.hpp>
#include <pgas/core/ordering.hpp>
#include <pgas/core/runtime_state.hpp>
#include <pgas/core/scope.hpp>
#include <pgas/core/symmetric_ptr.hpp>
#include <pgas/core/team.hpp>
#include <pgas/core/window.hpp>
#include <pgas/device/atomic.hpp>
#include <pgas/device/context.hpp>
#include <pgas/device/rma.hpp>
#include <pgas/device/signal.hpp>
#include <pgas/device/sync.hpp>
#include <pgas/device/window.hpp>
#include <pgas/ep/config.hpp>
#include <pgas/ep/grid.hpp>
#include <pgas/ep/low_latency.hpp>
#include <pgas/ep/throughput.hpp>
#include <pgas/transport/concepts.hpp>
#include <pgas/transport/host/host.hpp>
#include <pgas/transport/nvlink/nvlink.hpp>
#include <pgas/transport/route/route.hpp>
