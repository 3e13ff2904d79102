// <nvshmemx.h> of the pgas::nvshmem target: NVSHMEM's extensions, provided by pgas with the rest of its API; of the
// tile API, only what makes a program that uses it stop at compile time saying why.
#pragma once

#include <nvshmem.h>
#include <pgas/compat/nvshmem/tile.hpp>
