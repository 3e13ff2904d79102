// <nvshmemx.h> of the pgas::nvshmem target: NVSHMEM's extensions, provided by pgas with the rest of its API.
#pragma once

#include <nvshmem.h>
