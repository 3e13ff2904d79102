// What the tests of every transport share: world options, the value mix, element-type lists, the launcher
// contract under which one test body runs on each transport, and the checks a body makes as host or device code.
#pragma once

#include <pgas/pgas.hpp>

#include <doctest/doctest.h>

#include <nv/target>

#include <cstddef>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

namespace test {

#if defined(__CUDACC__)
// Internal linkage, all of it: without -rdc each translation unit's kernels count into that TU's own counter, and a
// launcher must read the counter of its own TU (an inline function with external linkage would be merged across TUs
// and read one of them).
namespace {
// The checks that failed in this translation unit's kernels on the current GPU (a launcher that runs bodies in
// kernels reads it back and fails the case when it is not 0).
__device__ unsigned int device_failures;

// A failed check in a kernel: says where and what, and is counted (a kernel cannot throw as REQUIRE does; the body
// goes on, so that its PE still meets its peers at their barriers).
__device__ __noinline__ void device_check_failed(const char* file, int line, const char* what) {
    std::printf("%s:%d: check failed in a kernel (block %d, thread %d): %s\n", file, line, int(blockIdx.x),
                int(threadIdx.x), what);
    atomicAdd(&device_failures, 1u);
}
}  // namespace
#endif

// A case body's checks (tests/common/*_cases.hpp): doctest's CHECK and REQUIRE where the body runs as host code; in a
// kernel (the GPU launchers) a failure is printed and counted.
#define PGAS_TEST_CHECK(...)                                                                                       \
    NV_IF_TARGET(NV_IS_DEVICE,                                                                                      \
                 (if (!static_cast<bool>(__VA_ARGS__))::test::device_check_failed(__FILE__, __LINE__, #__VA_ARGS__);), \
                 (CHECK(__VA_ARGS__);))
#define PGAS_TEST_REQUIRE(...)                                                                                     \
    NV_IF_TARGET(NV_IS_DEVICE,                                                                                      \
                 (if (!static_cast<bool>(__VA_ARGS__))::test::device_check_failed(__FILE__, __LINE__, #__VA_ARGS__);), \
                 (REQUIRE(__VA_ARGS__);))

// A case body's INFO/CAPTURE: doctest's in host code (scoped to the enclosing block, so not behind NV_IF_TARGET, whose
// branches are blocks of their own); nothing in a kernel.
#if defined(__CUDA_ARCH__)
#define PGAS_TEST_CAPTURE(x) ((void)0)
#define PGAS_TEST_INFO(...) ((void)0)
#else
#define PGAS_TEST_CAPTURE(x) CAPTURE(x)
#define PGAS_TEST_INFO(...) INFO(__VA_ARGS__)
#endif

// Small heaps keep 8-PE worlds cheap; a wait that takes 20 s is a bug.
inline pgas::world_options options(std::int64_t timeout_ms = 20000) {
    pgas::world_options o;
    o.heap_bytes = std::uint64_t{16} << 20;
    o.timeout_ms = timeout_ms;
    return o;
}

// A value in which every byte depends on all three inputs (splitmix64's
// finaliser), so a missing, misplaced or stale byte of a copy is always seen.
PGAS_HD inline std::uint64_t mix(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
    std::uint64_t z = a * 0x9e3779b97f4a7c15ull + b * 0xbf58476d1ce4e5b9ull + c * 0x94d049bb133111ebull + 1;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// The index of the first of got[0, count) that is not expected(i), or count when all are (one assertion per
// buffer: a byte-by-byte REQUIRE over megabytes is most of a run's time).
template <class T, class F>
PGAS_HD std::size_t first_wrong(const T* got, std::size_t count, F&& expected) {
    for (std::size_t i = 0; i < count; ++i)
        if (!(got[i] == expected(i))) return i;
    return count;
}

// Whether text contains part (doctest 2.4's Contains takes no std::string).
inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The pgas::error that body() throws, or none when it returns: for what error_of below does not give (the error's
// pe(), or the error itself for a helper that hands it on).
template <class Body>
std::optional<pgas::error> thrown(Body&& body) {
    try {
        body();
    } catch (const pgas::error& e) {
        return e;
    }
    return std::nullopt;
}

// The message of the pgas::error that body() throws, or "no error" when it returns (so that a check of the message
// fails then too).
template <class Body>
std::string error_of(Body&& body) {
    const std::optional<pgas::error> e = thrown(body);
    return e ? e->what() : "no error";
}

// The same, and the error's code must be `expected`.
template <class Body>
std::string error_of(Body&& body, pgas::errc expected) {
    const std::optional<pgas::error> e = thrown(body);
    if (e) CHECK(e->code() == expected);
    return e ? e->what() : "no error";
}

template <class... Ts>
struct type_list {};

// f(type tag, index of the type in the list) for every type of the list.
template <class F, class... Ts>
void for_each_type(type_list<Ts...>, F&& f) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        (f(std::type_identity<Ts>{}, std::integral_constant<int, int(I)>{}), ...);
    }(std::index_sequence_for<Ts...>{});
}

template <class T>
const char* type_name() {
    if constexpr (std::is_same_v<T, __half>) return "half";
    else if constexpr (std::is_same_v<T, __nv_bfloat16>) return "bf16";
    else if constexpr (std::is_same_v<T, float>) return "float";
    else if constexpr (std::is_same_v<T, double>) return "double";
    else if constexpr (std::is_signed_v<T>) return sizeof(T) == 1 ? "int8" : sizeof(T) == 2 ? "int16" : sizeof(T) == 4 ? "int32" : "int64";
    else return sizeof(T) == 1 ? "uint8" : sizeof(T) == 2 ? "uint16" : sizeof(T) == 4 ? "uint32" : "uint64";
}

using groups = type_list<pgas::thread, pgas::warp, pgas::tile<4>, pgas::block>;

template <class G>
const char* group_name() {
    if constexpr (std::is_same_v<G, pgas::thread>) return "thread";
    else if constexpr (std::is_same_v<G, pgas::warp>) return "warp";
    else if constexpr (std::is_same_v<G, pgas::block>) return "block";
    else return "tile<4>";
}

// f(type tag of G) for every calling group (on the host each group is one thread, but each is its own instantiation
// of the transports' group code), with the group named in a failure's message.
template <class F>
void for_each_group(F&& f) {
    for_each_type(groups{}, [&](auto tag, auto) {
        INFO("group " << std::string(group_name<typename decltype(tag)::type>()));
        f(tag);
    });
}

// Private (not symmetric) memory of `count` elements for a case body, freed at the end of its scope: new[] in host
// code, the device heap's in a kernel (a GPU launcher sizes that heap: cudaLimitMallocHeapSize). Its elements are
// not initialised.
template <class T>
class scratch {
public:
    PGAS_HD explicit scratch(std::size_t count) : elements_(new T[count]) {}
    PGAS_HD ~scratch() { delete[] elements_; }
    scratch(const scratch&) = delete;
    scratch& operator=(const scratch&) = delete;
    PGAS_HD T* data() const { return elements_; }
    PGAS_HD T& operator[](std::size_t i) const { return elements_[i]; }

private:
    T* elements_;
};

// The calling groups a body sweeps: every group in host code (each one thread there, but each its own instantiation
// of the transports' group code); in a kernel, where a body runs on one thread, the thread group only (the group
// forms on GPUs: tests/gpu/gpu_test.cu).
#if defined(__CUDA_ARCH__)
using body_groups = type_list<pgas::thread>;
#else
using body_groups = groups;
#endif

// f(type tag of G) for every G of body_groups, in host code or a kernel.
template <class F, class... Gs>
PGAS_HD void for_each_body_group(type_list<Gs...>, F&& f) {
    (f(std::type_identity<Gs>{}), ...);
}

// Memory a PE allocated itself (not the symmetric heap), for a case that registers it (windows): `count` elements
// for local PE `local` of `w`, on that PE's GPU where the world has one, else in host memory; zeroed. Per world PE
// a slot of a pool that lives as long as the process (a launcher's world is gone before the case's next run, and
// nothing is freed that a registration could still name).
template <class T>
T* private_buffer(pgas::world& w, int local, std::size_t count) {
    constexpr std::size_t slot_bytes = 4096, slots = 16;
    const int pe = w.local_pe(local), device = w.device_of(local);
    REQUIRE(count * sizeof(T) <= slot_bytes);
    REQUIRE(pe < int(slots));
    if (device < 0) {
        alignas(64) static std::byte host_pool[slots][slot_bytes];
        std::memset(host_pool[pe], 0, slot_bytes);
        return reinterpret_cast<T*>(host_pool[pe]);
    }
    constexpr int max_devices = 64;
    static std::byte* device_pools[max_devices] = {};
    static std::mutex pools_mutex;
    std::lock_guard lock(pools_mutex);
    REQUIRE(device < max_devices);
    REQUIRE(cudaSetDevice(device) == cudaSuccess);
    if (!device_pools[device])
        REQUIRE(cudaMalloc(reinterpret_cast<void**>(&device_pools[device]), slots * slot_bytes) == cudaSuccess);
    std::byte* slot = device_pools[device] + std::size_t(pe) * slot_bytes;
    REQUIRE(cudaMemset(slot, 0, slot_bytes) == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    return reinterpret_cast<T*>(slot);
}

// What a case's buffers need after its run, collectively, before the world goes (a launcher calls release_after_run):
// nothing, unless the case's namespace declares release_case_buffers(world&, const its_buffers&) (found by ADL: the
// windows' case releases its window).
template <class Buffers>
void release_case_buffers(pgas::world&, const Buffers&) {}
template <class Buffers>
void release_after_run(pgas::world& w, const Buffers& buffers) {
    release_case_buffers(w, buffers);
}

// A launcher starts worlds of one transport for the shared cases (tests/common/*_cases.hpp):
//   launch.pe_counts()         the world sizes a case sweeps;
//   launch(n, alloc, body)     one world of n PEs: alloc(pgas::world&) makes the case's symmetric buffers (on every
//                              PE, collectively, where each PE has its own world), then body(ctx, buffers) runs on
//                              every PE with that PE's device context, and the launcher checks what its transport
//                              checks after a run (the emulated NIC's protocol violations), and gives back what
//                              alloc made (release_after_run) before the world goes.
template <class L>
concept launcher = requires(const L& launch) {
    { launch.pe_counts() } -> std::convertible_to<std::span<const int>>;
};

// Runs one case on a world of each of the launcher's sizes.
template <launcher L, class Alloc, class Body>
void on_each_world(const L& launch, Alloc&& alloc, Body&& body) {
    for (int n : launch.pe_counts()) {
        CAPTURE(n);
        launch(n, alloc, body);
    }
}

// Runs case_for_type<T>() for every T of the list, with the type named in a failure's message.
template <class Types, class F>
void for_each_element_type(F&& case_for_type) {
    for_each_type(Types{}, [&](auto tag, auto) {
        using T = typename decltype(tag)::type;
        INFO("element type " << std::string(type_name<T>()));  // doctest prints a const char* as an address
        case_for_type(tag);
    });
}

}  // namespace test
