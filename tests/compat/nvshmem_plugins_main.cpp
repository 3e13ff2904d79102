// Loads two NVSHMEM plug-ins (argv[1], argv[2]: modules built from nvshmem_plugin.cpp) with dlopen(RTLD_LOCAL), as a
// Python process loads extension modules; this program links nothing of pgas. The first starts NVSHMEM; the second
// must find it started (one runtime per process) and run a ring on it.
#include <dlfcn.h>

#include <cstdio>

template <class F>
static F symbol(void* module, const char* name) {
    void* found = dlsym(module, name);
    if (!found) {
        std::fprintf(stderr, "dlsym %s: %s\n", name, dlerror());
        return nullptr;
    }
    return reinterpret_cast<F>(found);
}

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s PLUGIN_A PLUGIN_B\n", argv[0]);
        return 2;
    }
    void* a = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    void* b = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    if (!a || !b) {
        std::fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    const auto init = symbol<int (*)()>(a, "plugin_init");
    const auto finalize = symbol<void (*)()>(a, "plugin_finalize");
    const auto ring = symbol<int (*)()>(b, "plugin_ring");
    const auto n_pes = symbol<int (*)()>(b, "plugin_n_pes");
    if (!init || !finalize || !ring || !n_pes) return 2;
    const int me = init();     // plug-in A starts NVSHMEM
    const int npes = n_pes();  // plug-in B must see it started
    const int got = ring();
    const int expected = 100 + (me + npes - 1) % npes;
    std::printf("PE %d of %d: plug-in B's ring got %d from the left: %s\n", me, npes, got,
                got == expected ? "ok, one runtime across two dlopen'd modules" : "WRONG");
    finalize();
    return got == expected ? 0 : 1;
}
