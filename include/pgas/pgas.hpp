// Umbrella header: everything a pgas user includes (host API, device API, collectives, transports).
#pragma once

#include <pgas/device.hpp>
#include <pgas/host/stream/collective_launch.hpp>
#include <pgas/host/ep/buffer.hpp>
#include <pgas/host/host_memory/builder.hpp>
#include <pgas/host/bootstrap/launch_env.hpp>
#include <pgas/host/nvlink/builder.hpp>
#include <pgas/host/route/builder.hpp>
#include <pgas/host/route/context.hpp>
#include <pgas/host/heap/shm.hpp>
#include <pgas/host/bootstrap/tcp_store.hpp>
#include <pgas/host/world.hpp>
