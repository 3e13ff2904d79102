// An NVSHMEM program in NVSHMEM's style, built by nvcc without -rdc against pgas::nvshmem, with kernels in two
// translation units (each reaches the heap through its own device state): p (int, half, and a short awaited by
// short_wait_until) and putmem_nbi around a ring with quiet and barrier_all here, an atomic ticket and a signal in
// nvshmem_gpu_kernels.cu; device collectives there (by a block and a thread, started by nvshmemx_collective_launch;
// double2 maxloc), on-stream barrier, reduce, fcollect, put, p and g here, and a host-side reduction with the heap on
// the GPU, waits on a stream, a strided put by a block, strided put/get on a stream and from host code, host
// signal_op and signal_fetch, host putmem_nbi/getmem_nbi completed by quiet, a put in a kernel from a host buffer
// nvshmemx_buffer_register made reachable, and a cuMemCreate buffer made symmetric
// (nvshmemx_buffer_register_symmetric). Every PE checks what it received; --before-init checks that a kernel launched
// before nvshmem_init traps instead of reaching garbage.
#include "nvshmem_gpu.hpp"

#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdio>
#include <cuda.h>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CUDA_CHECK(call)                                                                                    \
    do {                                                                                                    \
        const cudaError_t status = (call);                                                                  \
        if (status != cudaSuccess) {                                                                        \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(status)); \
            std::exit(1);                                                                                   \
        }                                                                                                   \
    } while (0)

__global__ void ring(shared_words words) {
    const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
    const int right = (me + 1) % npes;
    nvshmem_int_p(words.from_left, me, right);
    nvshmem_half_p(words.half_from_left, __float2half(me + 0.5f), right);
    int block[4] = {me, me * 10, me * 100, me * 1000};
    nvshmem_putmem_nbi(words.block, block, sizeof block, right);
    nvshmem_quiet();  // block[] is a local array: it must stay until the put completes
    nvshmem_barrier_all();
    nvshmem_short_p(words.short_from_left, short(-1 - me), right);  // a 2-byte word, awaited alone
    nvshmem_short_wait_until(words.short_from_left, NVSHMEM_CMP_LT, 0);
}

// A kernel reading a host buffer that nvshmemx_buffer_register made reachable from the GPU, put to the right PE.
__global__ void put_from_registered(long* dest, const long* registered, int right) {
    nvshmem_long_put(dest, registered, 4, right);
}

// A strided put by a block: 100 elements to every other slot of the right PE's buffer (each thread some of them).
__global__ void iput_by_block(long* dest, const long* source, int right) {
    nvshmemx_long_iput_block(dest, source, 2, 1, 100, right);
}

static int check(const char* what, long long seen, long long expected) {
    if (seen == expected) return 0;
    std::fprintf(stderr, "PE %d: %s = %lld, expected %lld\n", nvshmem_my_pe(), what, seen, expected);
    return 1;
}

template <class T>
static T read(const T* symmetric) {
    T value;
    CUDA_CHECK(cudaMemcpy(&value, symmetric, sizeof value, cudaMemcpyDeviceToHost));
    return value;
}

// A kernel launched before nvshmem_init finds its translation unit's state not filled: it must trap, saying so.
static int kernel_before_init() {
    ring<<<1, 1>>>(shared_words{});
    const cudaError_t status = cudaDeviceSynchronize();
    std::printf("kernel before nvshmem_init: %s\n", cudaGetErrorString(status));
    return status != cudaSuccess ? 0 : 1;
}

// A buffer of the program's own, made symmetric as NVSHMEM's user-buffer example does: cuMemCreate (exportable as a
// POSIX descriptor) and cuMemMap, nvshmemx_buffer_register_symmetric, then an on-stream put to the right PE's copy and
// a sum over every PE's, both on the registered memory; unregistered and released after. Returns the checks failed.
static int check_symmetric_registration(int me, int npes, cudaStream_t stream) {
    constexpr int n = 512;  // ints: the first half is put to the right PE, the reduction reads it into the second
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    std::size_t granule = 0;
    cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    const std::size_t bytes = (2 * n * sizeof(int) + granule - 1) / granule * granule;
    CUmemGenericAllocationHandle handle{};
    CUdeviceptr buffer = 0;
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    const bool made = cuMemCreate(&handle, bytes, &prop, 0) == CUDA_SUCCESS &&
                      cuMemAddressReserve(&buffer, bytes, 0, 0, 0) == CUDA_SUCCESS &&
                      cuMemMap(buffer, bytes, 0, handle, 0) == CUDA_SUCCESS &&
                      cuMemSetAccess(buffer, bytes, &access, 1) == CUDA_SUCCESS;
    if (!made) return check("cuMemCreate/cuMemMap of the user buffer", 0, 1);
    int* symmetric = static_cast<int*>(nvshmemx_buffer_register_symmetric(reinterpret_cast<void*>(buffer), bytes, 0));
    int wrong = check("nvshmemx_buffer_register_symmetric returned an address", symmetric != nullptr, 1);
    if (symmetric == nullptr) return wrong;
    int values[n];
    for (int i = 0; i < n; ++i) values[i] = 100 * me + i;
    CUDA_CHECK(cudaMemcpy(symmetric + n, values, sizeof values, cudaMemcpyHostToDevice));  // the put's source
    nvshmem_barrier_all();
    nvshmemx_int_put_on_stream(symmetric, symmetric + n, n, (me + 1) % npes, stream);
    nvshmemx_barrier_all_on_stream(stream);
    nvshmemx_int_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, symmetric + n, symmetric, n, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    int got[2 * n];
    CUDA_CHECK(cudaMemcpy(got, reinterpret_cast<void*>(buffer), sizeof got, cudaMemcpyDeviceToHost));  // the user's own
    const int left = (me + npes - 1) % npes;
    for (int i = 0; i < n; ++i) {
        wrong += check("registered buffer: put from the left PE", got[i], 100 * left + i);
        wrong += check("registered buffer: sum over the PEs", got[n + i], 100 * (npes * (npes - 1) / 2) + npes * i);
    }
    wrong += check("nvshmemx_buffer_unregister_symmetric", nvshmemx_buffer_unregister_symmetric(symmetric, bytes), 0);
    cuMemUnmap(buffer, bytes);
    cuMemAddressFree(buffer, bytes);
    cuMemRelease(handle);
    return wrong;
}

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "--before-init") == 0) return kernel_before_init();
    nvshmem_init();
    const int mype_node = nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE);
    int devices = 0;
    CUDA_CHECK(cudaGetDeviceCount(&devices));
    CUDA_CHECK(cudaSetDevice(mype_node % devices));
    const int me = nvshmem_my_pe(), npes = nvshmem_n_pes(), left = (me + npes - 1) % npes;

    shared_words words{};
    words.from_left = static_cast<int*>(nvshmem_malloc(sizeof(int)));
    words.block = static_cast<int*>(nvshmem_malloc(4 * sizeof(int)));
    words.counter = static_cast<int*>(nvshmem_malloc(sizeof(int)));
    words.ticket = static_cast<int*>(nvshmem_malloc(sizeof(int)));
    words.payload = static_cast<int*>(nvshmem_malloc(sizeof(int)));
    words.signal = static_cast<std::uint64_t*>(nvshmem_malloc(sizeof(std::uint64_t)));
    words.seen_signal = static_cast<std::uint64_t*>(nvshmem_malloc(sizeof(std::uint64_t)));
    words.coll_src = static_cast<int*>(nvshmem_malloc(coll_count * sizeof(int)));
    words.block_sum = static_cast<int*>(nvshmem_malloc(coll_count * sizeof(int)));
    words.gathered = static_cast<int*>(nvshmem_malloc(coll_count * npes * sizeof(int)));
    words.thread_max = static_cast<int*>(nvshmem_malloc(coll_count * sizeof(int)));
    words.team_sum = static_cast<int*>(nvshmem_malloc(coll_count * sizeof(int)));
    words.team_me = static_cast<int*>(nvshmem_malloc(sizeof(int)));
    int* stream_sum = static_cast<int*>(nvshmem_malloc(coll_count * sizeof(int)));
    int* stream_gathered = static_cast<int*>(nvshmem_malloc(coll_count * npes * sizeof(int)));
    int* stream_put = static_cast<int*>(nvshmem_malloc(coll_count * sizeof(int)));
    int* host_sum = static_cast<int*>(nvshmem_malloc(coll_count * sizeof(int)));
    words.half_from_left = static_cast<__half*>(nvshmem_malloc(sizeof(__half)));
    words.any_index = static_cast<std::size_t*>(nvshmem_malloc(sizeof(std::size_t)));
    int* stream_p = static_cast<int*>(nvshmem_malloc(sizeof(int)));
    words.maxloc = static_cast<double2*>(nvshmem_malloc(2 * sizeof(double2)));
    words.short_from_left = static_cast<short*>(nvshmem_calloc(1, sizeof(short)));
    words.warpgroup_from_left = static_cast<int*>(nvshmem_calloc(2, sizeof(int)));
    int coll_values[coll_count];
    for (int i = 0; i < coll_count; ++i) coll_values[i] = 10 * me + i;
    CUDA_CHECK(cudaMemcpy(words.coll_src, coll_values, sizeof coll_values, cudaMemcpyHostToDevice));
    const double2 my_pair{double(me % 2), double(10 + me)};  // PEs 1, 3, ... hold the largest: PE 1's location wins
    CUDA_CHECK(cudaMemcpy(words.maxloc, &my_pair, sizeof my_pair, cudaMemcpyHostToDevice));
    nvshmem_barrier_all();

    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    ring<<<1, 1, 0, stream>>>(words);
    CUDA_CHECK(cudaGetLastError());
    launch_ticket_and_signal(words, stream);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    nvshmem_barrier_all();

    // Device collectives in a collectively launched kernel, then their on-stream forms and a put on the stream.
    const int launched = launch_collectives(words, stream);
    nvshmemx_barrier_all_on_stream(stream);
    nvshmemx_int_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, stream_sum, words.coll_src, coll_count, stream);
    nvshmemx_int_fcollect_on_stream(NVSHMEMX_TEAM_NODE, stream_gathered, words.coll_src, coll_count, stream);
    nvshmemx_int_put_on_stream(stream_put, words.coll_src, coll_count, (me + 1) % npes, stream);
    nvshmemx_int_p_on_stream(stream_p, 70 + me, (me + 1) % npes, stream);
    nvshmemx_quiet_on_stream(stream);
    nvshmemx_barrier_on_stream(NVSHMEM_TEAM_WORLD, stream);
    const int stream_g = nvshmemx_int_g_on_stream(stream_p, (me + 1) % npes, stream);  // waits for the stream
    CUDA_CHECK(cudaStreamSynchronize(stream));
    nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, host_sum, words.coll_src, coll_count);  // host code, heap on the GPU

    // A split team (a copy of the world, in a slot of its own), made after every TU's state was filled, used in the
    // second TU's kernel by its handle, then destroyed.
    nvshmem_team_t copy = NVSHMEM_TEAM_INVALID;
    const int split = nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 1, npes, nullptr, 0, &copy);
    launch_team_sum(words, copy, stream);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    nvshmem_team_destroy(copy);
    const int split_team_me = read(words.team_me);
    int split_team_sum[coll_count];
    for (int i = 0; i < coll_count; ++i) split_team_sum[i] = read(words.team_sum + i);
    // The same kernel over NVSHMEMX_TEAM_SAME_MYPE_NODE by its handle: one node here, so each PE alone.
    launch_team_sum(words, NVSHMEMX_TEAM_SAME_MYPE_NODE, stream);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    launch_warpgroup_barrier(words, stream);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));

    int wrong = check("from_left", read(words.from_left), left);
    // Processes sharing this GPU (fewer GPUs than PEs on the node): NVSHMEM's multi-process-per-GPU status.
    const int node_pes = nvshmem_team_n_pes(NVSHMEMX_TEAM_NODE);
    wrong += check("nvshmemx_init_status", nvshmemx_init_status(),
                   devices < node_pes ? NVSHMEM_STATUS_FULL_MPG : NVSHMEM_STATUS_IS_INITIALIZED);
    wrong += check("short_from_left", read(words.short_from_left), -1 - left);
    wrong += check("read after nvshmemx_barrier_warpgroup", read(words.warpgroup_from_left + 1), 500 + left);
    wrong += check("half_from_left (x2)", (long long)(2 * __half2float(read(words.half_from_left))), 2 * left + 1);
    wrong += check("wait_until_any's index", (long long)read(words.any_index), 0);
    wrong += check("stream_p", read(stream_p), 70 + left);
    wrong += check("g_on_stream of what p_on_stream wrote", stream_g, 70 + me);
    const long long block_expected[4] = {left, left * 10, left * 100, left * 1000};
    for (int i = 0; i < 4; ++i) wrong += check("block[i]", read(words.block + i), block_expected[i]);
    const int ticket = read(words.ticket);
    wrong += check("ticket in [0, n_pes)", ticket >= 0 && ticket < npes, 1);
    wrong += check("payload", read(words.payload), 100 + left);
    wrong += check("signal seen", (long long)read(words.seen_signal), 1);
    if (me == 0) wrong += check("counter on PE 0", read(words.counter), npes);
    wrong += check("nvshmemx_collective_launch's status", launched, NVSHMEMX_SUCCESS);
    wrong += check("nvshmem_team_split_strided's status", split, 0);
    wrong += check("team_my_pe of the split team, in a kernel", split_team_me, me);
    wrong += check("team_my_pe of NVSHMEMX_TEAM_SAME_MYPE_NODE, in a kernel", read(words.team_me), 0);
    wrong += check("team_n_pes of NVSHMEMX_TEAM_SAME_MYPE_NODE", nvshmem_team_n_pes(NVSHMEMX_TEAM_SAME_MYPE_NODE), 1);
    const int sum_of_pes = npes * (npes - 1) / 2;
    const double2 maxloc = read(words.maxloc + 1);
    wrong += check("maxloc value", (long long)maxloc.x, npes > 1 ? 1 : 0);
    wrong += check("maxloc location", (long long)maxloc.y, npes > 1 ? 11 : 10);
    for (int i = 0; i < coll_count; ++i) {
        wrong += check("block_sum[i]", read(words.block_sum + i), 10 * sum_of_pes + npes * i);
        wrong += check("thread_max[i]", read(words.thread_max + i), 10 * (npes - 1) + i);
        wrong += check("stream_sum[i]", read(stream_sum + i), 10 * sum_of_pes + npes * i);
        wrong += check("host_sum[i]", read(host_sum + i), 10 * sum_of_pes + npes * i);
        wrong += check("team_sum[i]", split_team_sum[i], 10 * sum_of_pes + npes * i);
        wrong += check("sum over NVSHMEMX_TEAM_SAME_MYPE_NODE [i]", read(words.team_sum + i), 10 * me + i);
        wrong += check("stream_put[i]", read(stream_put + i), 10 * left + i);
        for (int j = 0; j < npes; ++j) {
            wrong += check("gathered[j][i]", read(words.gathered + j * coll_count + i), 10 * j + i);
            wrong += check("stream_gathered[j][i]", read(stream_gathered + j * coll_count + i), 10 * j + i);
        }
    }
    // Waits on a stream, one PE at a time: the waiter enqueues its waits and blocks on the stream until its left PE
    // has written the words (with a p on a stream); the stream's later copy sees them. A process never both waits and
    // writes in one round (but a PE alone, which writes first): its writing kernel could queue behind its own waiting
    // ones (streams share the GPU's work queues, fewer under MPS), a deadlock of this test's own making on one H100
    // under MPS (2026-12-06).
    int* waited = static_cast<int*>(nvshmem_calloc(3, sizeof(int)));
    int* wait_values = nullptr;  // the _vector form's values, read by the kernel: device memory
    CUDA_CHECK(cudaMalloc(&wait_values, 2 * sizeof(int)));
    const int values_host[2] = {left + 1, left + 2};
    CUDA_CHECK(cudaMemcpy(wait_values, values_host, sizeof values_host, cudaMemcpyHostToDevice));
    cudaStream_t writer;
    CUDA_CHECK(cudaStreamCreateWithFlags(&writer, cudaStreamNonBlocking));
    int seen_after_wait[2] = {};
    for (int waiter = 0; waiter < npes; ++waiter) {
        if ((me + 1) % npes == waiter) {  // the waiter's left PE (one PE alone is its own: it writes, then waits)
            nvshmemx_int_p_on_stream(waited + 1, me + 2, waiter, writer);
            nvshmemx_int_p_on_stream(waited, me + 1, waiter, writer);
            CUDA_CHECK(cudaStreamSynchronize(writer));
        }
        if (me == waiter) {
            nvshmemx_int_wait_until_on_stream(waited, NVSHMEM_CMP_EQ, left + 1, stream);
            nvshmemx_int_wait_until_all_on_stream(waited, 2, nullptr, NVSHMEM_CMP_GE, 1, stream);
            nvshmemx_int_wait_until_all_vector_on_stream(waited, 2, nullptr, NVSHMEM_CMP_EQ, wait_values, stream);
            // Behind the waits on the stream (a copy to pageable memory returns once done).
            CUDA_CHECK(
                cudaMemcpyAsync(seen_after_wait, waited, sizeof seen_after_wait, cudaMemcpyDeviceToHost, stream));
            CUDA_CHECK(cudaStreamSynchronize(stream));
        }
        nvshmem_barrier_all();
    }
    wrong += check("word 0 after the on-stream waits", seen_after_wait[0], left + 1);
    wrong += check("word 1 after the on-stream waits", seen_after_wait[1], left + 2);
    CUDA_CHECK(cudaStreamDestroy(writer));
    CUDA_CHECK(cudaFree(wait_values));
    nvshmem_free(waited);

    // iput by a block of 64 threads.
    long* strided_src = static_cast<long*>(nvshmem_malloc(100 * sizeof(long)));
    long* strided_dst = static_cast<long*>(nvshmem_calloc(200, sizeof(long)));
    long strided_host[100];
    for (int i = 0; i < 100; ++i) strided_host[i] = 1000L * me + i;
    CUDA_CHECK(cudaMemcpy(strided_src, strided_host, sizeof strided_host, cudaMemcpyHostToDevice));
    iput_by_block<<<1, 64>>>(strided_dst, strided_src, (me + 1) % npes);
    CUDA_CHECK(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    for (int i = 0; i < 100; ++i) {
        wrong += check("iput_block [2i]", read(strided_dst + 2 * i), 1000L * left + i);
        wrong += check("iput_block [2i+1] untouched", read(strided_dst + 2 * i + 1), 0);
    }
    nvshmem_barrier_all();  // every PE has read its buffer before the left PE writes the next values into it
    // The same strided put on a stream (new values), then a strided get on a stream of what reached the right PE.
    for (int i = 0; i < 100; ++i) strided_host[i] = 2000L * me + i;
    CUDA_CHECK(cudaMemcpy(strided_src, strided_host, sizeof strided_host, cudaMemcpyHostToDevice));
    nvshmemx_long_iput_on_stream(strided_dst, strided_src, 2, 1, 100, (me + 1) % npes, stream);
    nvshmemx_barrier_all_on_stream(stream);
    long* fetched = nullptr;
    CUDA_CHECK(cudaMalloc(&fetched, 100 * sizeof(long)));
    nvshmemx_long_iget_on_stream(fetched, strided_dst, 1, 2, 100, (me + 1) % npes, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    long fetched_host[100];
    CUDA_CHECK(cudaMemcpy(fetched_host, fetched, sizeof fetched_host, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 100; ++i) {
        wrong += check("iput_on_stream [2i]", read(strided_dst + 2 * i), 2000L * left + i);
        wrong += check("iget_on_stream of the right PE's [2i]", fetched_host[i], 2000L * me + i);
    }
    CUDA_CHECK(cudaFree(fetched));
    nvshmem_barrier_all();
    // The same from host code (the heap on the GPU): iput from a host array, iget back into one.
    for (int i = 0; i < 100; ++i) strided_host[i] = 3000L * me + i;
    nvshmem_long_iput(strided_dst, strided_host, 2, 1, 100, (me + 1) % npes);
    nvshmem_barrier_all();
    long host_fetched[50];
    nvshmem_long_iget(host_fetched, strided_dst, 1, 4, 50, (me + 1) % npes);
    for (int i = 0; i < 100; ++i) wrong += check("host iput [2i]", read(strided_dst + 2 * i), 3000L * left + i);
    for (int i = 0; i < 50; ++i) wrong += check("host iget of the right PE's [4i]", host_fetched[i], 3000L * me + 2 * i);
    nvshmem_barrier_all();
    nvshmem_free(strided_dst);
    nvshmem_free(strided_src);

    // Signals from host code (the heap on the GPU): every PE adds me + 1 to each PE's word and sets its own slot in
    // the right PE's; each reads its word with nvshmem_signal_fetch.
    std::uint64_t* host_signals = static_cast<std::uint64_t*>(nvshmem_calloc(1 + npes, sizeof(std::uint64_t)));
    for (int pe = 0; pe < npes; ++pe) nvshmemx_signal_op(host_signals, me + 1, NVSHMEM_SIGNAL_ADD, pe);
    nvshmemx_signal_op(host_signals + 1 + me, 40 + me, NVSHMEM_SIGNAL_SET, (me + 1) % npes);
    nvshmem_barrier_all();
    wrong += check("host signal_op adds, then host signal_fetch", (long long)nvshmem_signal_fetch(host_signals),
                   (long long)npes * (npes + 1) / 2);
    wrong += check("host signal_op set by the left PE", (long long)nvshmem_signal_fetch(host_signals + 1 + left),
                   40 + left);
    nvshmem_barrier_all();
    nvshmem_free(host_signals);

    // Host _nbi transfers (the heap on the GPU) complete at nvshmem_quiet: a 16 MiB put to the right PE from device
    // memory overwritten right after quiet, and a get of the right PE's copy into device memory read right after
    // quiet, both by a stream that does not follow the legacy default stream (nothing else orders them).
    {
        constexpr std::size_t big = std::size_t{16} << 20;
        cudaStream_t unordered;
        CUDA_CHECK(cudaStreamCreateWithFlags(&unordered, cudaStreamNonBlocking));
        char* nbi_dst = static_cast<char*>(nvshmem_malloc(big));
        char *nbi_src = nullptr, *nbi_got = nullptr;
        CUDA_CHECK(cudaMalloc(&nbi_src, big));
        CUDA_CHECK(cudaMalloc(&nbi_got, big));
        CUDA_CHECK(cudaMemset(nbi_src, 0x10 + me, big));
        nvshmem_putmem_nbi(nbi_dst, nbi_src, big / 2, (me + 1) % npes);
        nvshmem_putmem_nbi(nbi_dst + big / 2, nbi_src + big / 2, big / 2, (me + 1) % npes);
        nvshmem_quiet();
        CUDA_CHECK(cudaMemsetAsync(nbi_src, 0, big, unordered));
        CUDA_CHECK(cudaStreamSynchronize(unordered));
        nvshmem_barrier_all();
        std::vector<unsigned char> bytes(big);
        CUDA_CHECK(cudaMemcpy(bytes.data(), nbi_dst, big, cudaMemcpyDeviceToHost));
        std::size_t differ = 0;
        for (unsigned char b : bytes) differ += b != 0x10 + left;
        wrong += check("host putmem_nbi, quiet, source overwritten: bytes not from the left PE", (long long)differ, 0);
        nvshmem_getmem_nbi(nbi_got, nbi_dst, big, (me + 1) % npes);
        nvshmem_quiet();
        CUDA_CHECK(cudaMemcpyAsync(bytes.data(), nbi_got, big, cudaMemcpyDeviceToHost, unordered));
        CUDA_CHECK(cudaStreamSynchronize(unordered));
        differ = 0;
        for (unsigned char b : bytes) differ += b != 0x10 + me;
        wrong += check("host getmem_nbi, quiet: bytes not the right PE's copy of this PE's", (long long)differ, 0);
        nvshmem_barrier_all();
        CUDA_CHECK(cudaFree(nbi_got));
        CUDA_CHECK(cudaFree(nbi_src));
        CUDA_CHECK(cudaStreamDestroy(unordered));
        nvshmem_free(nbi_dst);
    }

    // A pageable host buffer, registered (pgas page-locks and maps it), as the source of a put in a kernel.
    static long registered[4];
    for (int i = 0; i < 4; ++i) registered[i] = 7000L * me + i;
    long* from_registered = static_cast<long*>(nvshmem_malloc(4 * sizeof(long)));
    wrong += check("nvshmemx_buffer_register", nvshmemx_buffer_register(registered, sizeof registered), 0);
    put_from_registered<<<1, 1>>>(from_registered, registered, (me + 1) % npes);
    CUDA_CHECK(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    for (int i = 0; i < 4; ++i)
        wrong += check("put from a registered host buffer", read(from_registered + i), 7000L * left + i);
    wrong += check("nvshmemx_buffer_unregister", nvshmemx_buffer_unregister(registered), 0);
    nvshmem_free(from_registered);
    wrong += check_symmetric_registration(me, npes, stream);
    wrong += host_collectives_from_cxx();
    std::printf("PE %d of %d: from PE %d, ticket %d: %s\n", me, npes, left, ticket, wrong == 0 ? "ok" : "WRONG");

    CUDA_CHECK(cudaStreamDestroy(stream));
    nvshmem_free(words.warpgroup_from_left);
    nvshmem_free(words.short_from_left);
    nvshmem_free(words.maxloc);
    nvshmem_free(stream_p);
    nvshmem_free(words.any_index);
    nvshmem_free(words.half_from_left);
    nvshmem_free(host_sum);
    nvshmem_free(stream_put);
    nvshmem_free(stream_gathered);
    nvshmem_free(stream_sum);
    nvshmem_free(words.team_me);
    nvshmem_free(words.team_sum);
    nvshmem_free(words.thread_max);
    nvshmem_free(words.gathered);
    nvshmem_free(words.block_sum);
    nvshmem_free(words.coll_src);
    nvshmem_free(words.seen_signal);
    nvshmem_free(words.signal);
    nvshmem_free(words.payload);
    nvshmem_free(words.ticket);
    nvshmem_free(words.counter);
    nvshmem_free(words.block);
    nvshmem_free(words.from_left);
    nvshmem_finalize();
    return wrong == 0 ? 0 : 1;
}
