// Umbrella header: everything a pgas user includes (host API, device API, collectives, transports).
#pragma once

#include <pgas/device.hpp>
#include <pgas/host/collective_launch.hpp>
#include <pgas/host/ep/buffer.hpp>
#include <pgas/host/host/builder.hpp>
#include <pgas/host/launch_env.hpp>
#include <pgas/host/nvlink/builder.hpp>
#include <pgas/host/route/builder.hpp>
#include <pgas/host/route/context.hpp>
#include <pgas/host/shm_heap.hpp>
#include <pgas/host/tcp_bootstrap.hpp>
#include <pgas/host/world.hpp>
