// A plug-in that uses NVSHMEM, built twice (two modules from this source) and loaded by nvshmem_plugins_main.cpp
// with dlopen(RTLD_LOCAL), as Python loads two extension modules: one module starts NVSHMEM, the other uses it. Both
// must reach the one runtime of the process (the one copy of libpgas_nvshmem), not a registry of their own.
#include <nvshmem.h>

extern "C" {
// nvshmem_init; returns this PE.
__attribute__((visibility("default"))) int plugin_init() {
    nvshmem_init();
    return nvshmem_my_pe();
}

// A ring: each PE puts its number into the right PE's word; returns what came from the left (barriers included).
__attribute__((visibility("default"))) int plugin_ring() {
    const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
    int* word = static_cast<int*>(nvshmem_malloc(sizeof(int)));
    nvshmem_int_p(word, 100 + me, (me + 1) % npes);
    nvshmem_barrier_all();
    const int got = *word;
    nvshmem_free(word);
    return got;
}

__attribute__((visibility("default"))) int plugin_n_pes() { return nvshmem_n_pes(); }

__attribute__((visibility("default"))) void plugin_finalize() { nvshmem_finalize(); }
}
