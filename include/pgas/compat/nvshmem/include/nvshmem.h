// <nvshmem.h> of the pgas::nvshmem target: NVSHMEM's public API, provided by pgas (no -rdc, no device library).
#pragma once

#include <pgas/compat/nvshmem/api.hpp>
