// Umbrella header: everything a pgas user includes (host API, device API, collectives, transports).
#pragma once

#include <pgas/coll/allgather.hpp>
#include <pgas/coll/alltoall.hpp>
#include <pgas/coll/broadcast.hpp>
#include <pgas/coll/ops.hpp>
#include <pgas/coll/reduce.hpp>
#include <pgas/coll/reduce_scatter.hpp>
#include <pgas/coll/tuning.hpp>
#include <pgas/core/config.hpp>
#include <pgas/core/error.hpp>
#include <pgas/core/ordering.hpp>
#include <pgas/core/scope.hpp>
#include <pgas/core/symmetric_ptr.hpp>
#include <pgas/core/team.hpp>
#include <pgas/device/atomic.hpp>
#include <pgas/device/context.hpp>
#include <pgas/device/rma.hpp>
#include <pgas/device/signal.hpp>
#include <pgas/device/sync.hpp>
#include <pgas/host/launch_env.hpp>
#include <pgas/host/shm_heap.hpp>
#include <pgas/host/tcp_bootstrap.hpp>
#include <pgas/host/world.hpp>
#include <pgas/transport/concepts.hpp>
#include <pgas/transport/host/host.hpp>
#include <pgas/transport/nvlink/nvlink.hpp>
