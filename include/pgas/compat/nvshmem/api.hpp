// NVSHMEM's public API on pgas (what <nvshmem.h> and <nvshmemx.h> of the pgas::nvshmem target include).
#pragma once

#include <pgas/compat/nvshmem/amo.hpp>
#include <pgas/compat/nvshmem/coll.hpp>
#include <pgas/compat/nvshmem/launch.hpp>
#include <pgas/compat/nvshmem/on_stream.hpp>
#include <pgas/compat/nvshmem/qp.hpp>
#include <pgas/compat/nvshmem/rma.hpp>
#include <pgas/compat/nvshmem/setup.hpp>
#include <pgas/compat/nvshmem/sync.hpp>
#include <pgas/compat/nvshmem/types.hpp>
