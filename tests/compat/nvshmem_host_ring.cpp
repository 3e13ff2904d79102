// An NVSHMEM program in NVSHMEM's own style, built by a plain C++ compiler against pgas::nvshmem and run on the host
// transport: a put/get ring, p/g, strided and sized puts, half and bfloat16, an atomic counter, a signal, barriers, and
// the waits and tests over arrays of words (_all/_any/_some and _vector; short and ushort too), a sized put_signal,
// strided puts by a warp and a block, the info calls, a registered local buffer, the QP calls; every PE checks what it
// received.
// Started by a launcher it calls nvshmem_init; as `--uid FILE RANK NRANKS` (no launcher) it starts with a unique id:
// rank 0 makes it and writes it to FILE, the other ranks read it from there.
#include <nvshmem.h>
#include <nvshmemx.h>

#include "nvshmem_expect.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

// NVSHMEMX_INIT_WITH_UNIQUEID, the id passed through `file` (written whole by a rename; read within 30 s).
void init_with_unique_id(const char* file, int rank, int nranks) {
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    if (rank == 0) {
        nvshmemx_get_uniqueid(&id);
        const std::string partial = std::string(file) + ".partial";
        std::FILE* out = std::fopen(partial.c_str(), "wb");
        if (!out || std::fwrite(&id, sizeof id, 1, out) != 1 || std::fclose(out) != 0 ||
            std::rename(partial.c_str(), file) != 0) {
            std::fprintf(stderr, "rank 0: cannot write the unique id to %s\n", file);
            std::exit(1);
        }
    } else {
        std::FILE* in = nullptr;
        for (int tries = 0; !in && tries < 3000; ++tries) {
            in = std::fopen(file, "rb");
            if (!in) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        if (!in || std::fread(&id, sizeof id, 1, in) != 1) {
            std::fprintf(stderr, "rank %d: no unique id in %s\n", rank, file);
            std::exit(1);
        }
        std::fclose(in);
    }
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    nvshmemx_set_attr_uniqueid_args(rank, nranks, &id, &attr);
    if (nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr) != NVSHMEMX_SUCCESS) std::exit(1);
}

// half and bfloat16 (NVSHMEM's 2-byte floating-point RMA types): a put around the ring and a get back, p and g, with
// values both formats hold exactly.
static void half_and_bfloat16(int me, int left, int right) {
    __half* h = static_cast<__half*>(nvshmem_malloc(4 * sizeof(__half)));
    __nv_bfloat16* b = static_cast<__nv_bfloat16*>(nvshmem_malloc(sizeof(__nv_bfloat16)));
    __half mine[4], back[4];
    for (int i = 0; i < 4; ++i) mine[i] = __float2half(me + 0.25f * i);
    nvshmem_half_put(h, mine, 4, right);
    nvshmem_bfloat16_p(b, __float2bfloat16(0.5f + me), right);
    nvshmem_barrier_all();
    for (int i = 0; i < 4; ++i)
        expect(__half2float(h[i]) == left + 0.25f * i, "half put from the left (x4)",
               (long long)(4 * __half2float(h[i])), 4 * left + i);
    expect(__bfloat162float(b[0]) == 0.5f + left, "bfloat16 p from the left (x2)",
           (long long)(2 * __bfloat162float(b[0])), 2 * left + 1);
    nvshmem_half_get(back, h, 4, right);  // the right PE's copy holds mine
    for (int i = 0; i < 4; ++i)
        expect(__half2float(back[i]) == me + 0.25f * i, "half get from the right (x4)",
               (long long)(4 * __half2float(back[i])), 4 * me + i);
    const float got = __bfloat162float(nvshmem_bfloat16_g(b, right));
    expect(got == 0.5f + me, "bfloat16 g from the right (x2)", (long long)(2 * got), 2 * me + 1);
    nvshmem_barrier_all();
    nvshmem_free(b);
    nvshmem_free(h);
}

// The waits and tests over an array of 4 words, each PE's written only by its left neighbour: none may block where no
// word can hold, and each must find exactly the words that hold.
static void waits_over_words(int* slots, int me, int left, int right) {
    const int none[4] = {1, 1, 1, 1}, not_2[4] = {0, 0, 1, 0}, only_2[4] = {1, 1, 0, 1}, not_3[4] = {0, 0, 0, 1};
    std::size_t at[4] = {9, 9, 9, 9};
    // All zero, nothing written yet: the tests answer at once; a wait with every word left out returns at once.
    expect(nvshmem_int_test_any(slots, 4, nullptr, NVSHMEM_CMP_NE, 0) == SIZE_MAX, "test_any, none holds", 0, 1);
    expect(nvshmem_int_test_some(slots, 4, at, nullptr, NVSHMEM_CMP_NE, 0) == 0, "test_some, none holds", 0, 1);
    expect(nvshmem_int_test_all(slots, 4, nullptr, NVSHMEM_CMP_NE, 0) == 0, "test_all, none holds", 1, 0);
    expect(nvshmem_int_test_all(slots, 4, nullptr, NVSHMEM_CMP_EQ, 0) == 1, "test_all, all hold", 0, 1);
    expect(nvshmem_int_test_all(slots, 4, none, NVSHMEM_CMP_NE, 0) == 1, "test_all, none selected", 0, 1);
    expect(nvshmem_int_wait_until_any(slots, 4, none, NVSHMEM_CMP_NE, 0) == SIZE_MAX, "wait_until_any, none selected",
           0, 1);
    expect(nvshmem_int_wait_until_some(slots, 4, at, none, NVSHMEM_CMP_NE, 0) == 0, "wait_until_some, none selected", 1,
           0);
    nvshmem_barrier_all();

    // The left neighbour sets word 2 alone: wait_until_any blocks until it lands and names it.
    nvshmem_int_p(slots + 2, 100 + me, right);
    const std::size_t first = nvshmem_int_wait_until_any(slots, 4, nullptr, NVSHMEM_CMP_NE, 0);
    expect(first == 2, "wait_until_any's index", (long long)first, 2);
    expect(nvshmem_int_test_any(slots, 4, not_2, NVSHMEM_CMP_NE, 0) == SIZE_MAX, "test_any, word 2 left out", 0, 1);
    nvshmem_int_wait_until_all(slots, 4, only_2, NVSHMEM_CMP_EQ, 100 + left);
    int was[4] = {0, 0, 100 + left, 0};
    expect(nvshmem_int_test_all_vector(slots, 4, nullptr, NVSHMEM_CMP_EQ, was) == 1, "test_all_vector", 0, 1);
    nvshmem_barrier_all();

    // Then words 0 and 3 (word 1 stays 0): the vector forms compare each word with its own value.
    nvshmem_int_p(slots, 5, right);
    nvshmem_int_p(slots + 3, 9, right);
    int now[4] = {5, 0, 100 + left, 9};
    nvshmem_int_wait_until_all_vector(slots, 4, nullptr, NVSHMEM_CMP_EQ, now);
    std::size_t n = nvshmem_int_wait_until_some(slots, 4, at, nullptr, NVSHMEM_CMP_GT, 0);
    expect(n == 3 && at[0] == 0 && at[1] == 2 && at[2] == 3, "wait_until_some: 3 words, 0 2 3", (long long)n, 3);
    int one_per_word[4] = {5, 1, 100 + left, 9};
    n = nvshmem_int_wait_until_some_vector(slots, 4, at, not_2, NVSHMEM_CMP_EQ, one_per_word);
    expect(n == 2 && at[0] == 0 && at[1] == 3, "wait_until_some_vector: words 0 3", (long long)n, 2);
    n = nvshmem_int_test_some_vector(slots, 4, at, not_2, NVSHMEM_CMP_EQ, one_per_word);
    expect(n == 2 && at[0] == 0 && at[1] == 3, "test_some_vector: words 0 3", (long long)n, 2);
    int only_3_holds[4] = {6, 1, 0, 9}, only_2_holds[4] = {6, 1, 100 + left, 8};
    n = nvshmem_int_test_any_vector(slots, 4, nullptr, NVSHMEM_CMP_EQ, only_3_holds);
    expect(n == 3, "test_any_vector's index", (long long)n, 3);
    n = nvshmem_int_wait_until_any_vector(slots, 4, not_3, NVSHMEM_CMP_EQ, only_2_holds);
    expect(n == 2, "wait_until_any_vector's index", (long long)n, 2);
    expect(nvshmem_int_test_any_vector(slots, 4, not_2, NVSHMEM_CMP_EQ, only_2_holds) == SIZE_MAX,
           "test_any_vector, the word that holds left out", 0, 1);
    nvshmem_barrier_all();
}

// NVSHMEM's 2-byte wait types: a short and an unsigned short word written by the left neighbour with nvshmem_<T>_p,
// beside words of the same 4 bytes that nobody writes.
static void short_waits(int me, int left, int right) {
    short* s = static_cast<short*>(nvshmem_calloc(4, sizeof(short)));
    unsigned short* u = static_cast<unsigned short*>(nvshmem_calloc(2, sizeof(unsigned short)));
    expect(nvshmem_short_test(s + 1, NVSHMEM_CMP_NE, 0) == 0, "short_test, nothing written", 0, 1);
    nvshmem_barrier_all();
    nvshmem_short_p(s + 1, short(-300 - me), right);
    nvshmem_ushort_p(u + 1, static_cast<unsigned short>(60000 + me), right);
    nvshmem_short_wait_until(s + 1, NVSHMEM_CMP_LT, 0);
    expect(s[1] == -300 - left, "short written by the left neighbour", s[1], -300 - left);
    const std::size_t which = nvshmem_ushort_wait_until_any(u, 2, nullptr, NVSHMEM_CMP_GT, 50000);
    expect(which == 1, "ushort_wait_until_any's index", (long long)which, 1);
    expect(u[1] == 60000 + left, "ushort written by the left neighbour", u[1], 60000 + left);
    expect(nvshmem_short_test_all(s, 4, nullptr, NVSHMEM_CMP_LE, 0) == 1, "short_test_all", 0, 1);
    expect(s[0] == 0 && s[2] == 0 && u[0] == 0, "the other halves untouched", s[0] + s[2] + u[0], 0);
    nvshmem_barrier_all();
    nvshmem_free(u);
    nvshmem_free(s);
}

// nvshmemx_buffer_register: a local buffer registered, used as the source of a put, and forgotten; an overlapping
// registration and an unregistration of an unknown address are refused (the program's stderr shows their lines).
// The sized put_signal, a strided put by a warp and a block (from host code a group is one thread), and what the
// info calls answer.
void sized_signal_strided_and_info(long* ring, std::uint64_t* flag, int me, int left, int right) {
    const std::uint64_t words[2] = {0xfeed0000u + std::uint64_t(me), 0xbeef0000u + std::uint64_t(me)};
    *flag = 0;
    nvshmem_barrier_all();
    nvshmem_put64_signal(ring, words, 2, flag, 7, NVSHMEM_SIGNAL_SET, right);
    nvshmem_signal_wait_until(flag, NVSHMEM_CMP_EQ, 7);
    expect(std::uint64_t(ring[0]) == 0xfeed0000u + std::uint64_t(left) &&
               std::uint64_t(ring[1]) == 0xbeef0000u + std::uint64_t(left),
           "put64_signal's data", ring[0], 0xfeed0000 + left);
    nvshmem_barrier_all();
    long mine[6];
    for (int i = 0; i < 6; ++i) mine[i] = 300L * me + i;
    nvshmemx_long_iput_warp(ring, mine, 2, 1, 3, right);           // ring[0, 2, 4] = mine[0, 1, 2]
    nvshmemx_long_iput_block(ring + 1, mine + 3, 2, 1, 3, right);  // ring[1, 3, 5] = mine[3, 4, 5]
    nvshmem_barrier_all();
    for (int i = 0; i < 3; ++i) {
        expect(ring[2 * i] == 300L * left + i, "iput_warp", ring[2 * i], 300L * left + i);
        expect(ring[2 * i + 1] == 300L * left + 3 + i, "iput_block", ring[2 * i + 1], 300L * left + 3 + i);
    }
    int major = 0, minor = 0, patch = 0, level = -1;
    nvshmem_info_get_version(&major, &minor);
    expect(major == NVSHMEM_MAJOR_VERSION && minor == NVSHMEM_MINOR_VERSION, "info_get_version", major, 1);
    nvshmemx_vendor_get_version_info(&major, &minor, &patch);
    expect(major == NVSHMEM_VENDOR_MAJOR_VERSION && NVSHMEM_VENDOR_VERSION >= 30000, "vendor version", major, 3);
    char name[NVSHMEM_MAX_NAME_LEN];
    nvshmem_info_get_name(name);
    expect(std::strcmp(name, NVSHMEM_VENDOR_STRING) == 0, "info_get_name", 0, 0);
    nvshmem_query_thread(&level);
    expect(level == NVSHMEM_THREAD_SERIALIZED, "query_thread", level, NVSHMEM_THREAD_SERIALIZED);
    nvshmem_barrier_all();
}

void registered_buffer(long* ring, int me, int left, int right) {
    static long local[8];
    for (int i = 0; i < 8; ++i) local[i] = 5000L * me + i;
    expect(nvshmemx_buffer_register(local, sizeof local) == 0, "buffer_register", 1, 0);
    expect(nvshmemx_buffer_register(local + 4, sizeof(long)) == NVSHMEMX_ERROR_INVALID_VALUE,
           "buffer_register overlapping a registered buffer", 0, NVSHMEMX_ERROR_INVALID_VALUE);
    expect(nvshmemx_buffer_register(nullptr, 8) == NVSHMEMX_ERROR_INVALID_VALUE, "buffer_register(NULL)", 0,
           NVSHMEMX_ERROR_INVALID_VALUE);
    nvshmem_long_put(ring, local, 8, right);
    nvshmem_barrier_all();
    for (int i = 0; i < 8; ++i)
        expect(ring[i] == 5000L * left + i, "put from a registered buffer", ring[i], 5000L * left + i);
    expect(nvshmemx_buffer_unregister(local + 1) == NVSHMEMX_ERROR_INVALID_VALUE,
           "buffer_unregister of an address not registered", 0, NVSHMEMX_ERROR_INVALID_VALUE);
    expect(nvshmemx_buffer_unregister(local) == 0, "buffer_unregister", 1, 0);
    expect(nvshmemx_buffer_register(local + 4, sizeof(long)) == 0, "buffer_register after unregister", 1, 0);
    nvshmemx_buffer_unregister_all();
    expect(nvshmemx_buffer_unregister(local + 4) == NVSHMEMX_ERROR_INVALID_VALUE, "unregister after unregister_all", 0,
           NVSHMEMX_ERROR_INVALID_VALUE);
    nvshmem_barrier_all();
}

// The QP API (on pgas each call is its plain twin): a put, a p, a put_signal and a signal_op to the right on handles
// from nvshmemx_qp_create, a get_nbi back, completed by nvshmemx_qp_quiet (of one PE, then of NVSHMEMX_PE_ALL and
// every QP) and ordered by nvshmemx_qp_fence; a qp_create of 0 handles or into NULL is refused (the program's stderr
// shows their lines).
void queue_pairs(long* ring, std::uint64_t* flag, int me, int left, int right) {
    nvshmemx_qp_handle_t* qps = nullptr;
    expect(nvshmemx_qp_create(0, &qps) == NVSHMEMX_ERROR_INVALID_VALUE && !qps, "qp_create(0, ...)", 0,
           NVSHMEMX_ERROR_INVALID_VALUE);
    expect(nvshmemx_qp_create(1, nullptr) == NVSHMEMX_ERROR_INVALID_VALUE, "qp_create(1, NULL)", 0,
           NVSHMEMX_ERROR_INVALID_VALUE);
    expect(nvshmemx_qp_create(2, &qps) == 0 && qps && qps[0] >= 0 && qps[1] >= 0, "qp_create(2, ...)", 1, 0);
    *flag = 0;
    nvshmem_barrier_all();
    long mine[4];
    for (int i = 0; i < 4; ++i) mine[i] = 700L * me + i;
    nvshmemx_qp_long_put(ring, mine, 4, right, qps[1]);
    nvshmemx_qp_long_p(ring + 4, 800L + me, right, qps[1]);
    nvshmemx_qp_quiet(right, qps, 2);
    nvshmem_barrier_all();
    for (int i = 0; i < 4; ++i) expect(ring[i] == 700L * left + i, "qp_long_put", ring[i], 700L * left + i);
    expect(ring[4] == 800L + left, "qp_long_p", ring[4], 800L + left);
    long back[4] = {};
    nvshmemx_qp_long_get_nbi(back, ring, 4, right, qps[0]);  // the right PE's ring holds mine
    nvshmemx_qp_quiet(NVSHMEMX_PE_ALL, nullptr, 0);           // every PE, every QP: NVSHMEM's spelling
    for (int i = 0; i < 4; ++i) expect(back[i] == mine[i], "qp_long_get_nbi after qp_quiet", back[i], mine[i]);
    const long g = nvshmemx_qp_long_g(ring + 4, right, qps[0]);
    expect(g == 800L + me, "qp_long_g", g, 800L + me);
    // The flag ends at 10 only if the fence keeps the put_signal's SET 9 before the ADD 1.
    nvshmemx_qp_long_put_signal(ring + 5, mine, 2, flag, 9, NVSHMEM_SIGNAL_SET, right, qps[1]);
    nvshmemx_qp_fence(right, qps, 2);
    nvshmemx_qp_signal_op(flag, 1, NVSHMEM_SIGNAL_ADD, right, qps[0]);
    nvshmem_signal_wait_until(flag, NVSHMEM_CMP_EQ, 10);
    expect(ring[5] == 700L * left && ring[6] == 700L * left + 1, "qp_long_put_signal's data", ring[5], 700L * left);
    nvshmem_barrier_all();
    std::free(qps);
}

int main(int argc, char** argv) {
    if (argc == 5 && std::strcmp(argv[1], "--uid") == 0)
        init_with_unique_id(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
    else
        nvshmem_init();
    const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
    const int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    expect(nvshmemx_init_status() == NVSHMEM_STATUS_IS_INITIALIZED, "init status", nvshmemx_init_status(),
           NVSHMEM_STATUS_IS_INITIALIZED);
    expect(nvshmem_team_n_pes(NVSHMEM_TEAM_WORLD) == npes, "world team size", nvshmem_team_n_pes(NVSHMEM_TEAM_WORLD),
           npes);
    expect(nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE) == me, "node team index", nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE), me);

    constexpr int n = 64;
    long* ring = static_cast<long*>(nvshmem_malloc(n * sizeof(long)));
    long* back = static_cast<long*>(nvshmem_calloc(n, sizeof(long)));
    int* counter = static_cast<int*>(nvshmem_align(64, sizeof(int)));
    std::uint64_t* flag = static_cast<std::uint64_t*>(nvshmem_malloc(sizeof(std::uint64_t)));
    double* word = static_cast<double*>(nvshmem_malloc(sizeof(double)));
    std::uint32_t* words32 = static_cast<std::uint32_t*>(nvshmem_malloc(2 * sizeof(std::uint32_t)));
    int* slots = static_cast<int*>(nvshmem_calloc(4, sizeof(int)));
    if (!ring || !back || !counter || !flag || !word || !words32 || !slots) {
        std::fprintf(stderr, "PE %d: nvshmem_malloc returned NULL\n", me);
        return 1;
    }
    long mine[n];
    for (int i = 0; i < n; ++i) mine[i] = 1000L * me + i;

    nvshmem_long_put(ring, mine, n, right);                          // my values into my right neighbour's ring
    nvshmem_double_p(word, 0.5 + me, right);                         // one element
    const int ticket = nvshmem_int_atomic_fetch_add(counter, 1, 0);  // a ticket from PE 0's counter
    nvshmem_quiet();
    nvshmem_barrier_all();
    for (int i = 0; i < n; ++i) expect(ring[i] == 1000L * left + i, "ring[i] from the left", ring[i], 1000L * left + i);
    expect(*word == 0.5 + left, "p from the left (x2)", long(*word * 2), long((0.5 + left) * 2));

    // Get the right neighbour's ring back (it holds my values) and its word with g.
    long got[n];
    nvshmem_long_get(got, ring, n, right);
    for (int i = 0; i < n; ++i) expect(got[i] == mine[i], "get from the right", got[i], mine[i]);
    expect(nvshmem_double_g(word, right) == 0.5 + me, "g from the right (x2)", long(nvshmem_double_g(word, right) * 2),
           long((0.5 + me) * 2));

    // Strided: every other element of mine into the first half of the right PE's back[] (iput), then my values back
    // from the left PE's ring with stride 2 (iget); and 32-bit words with the sized put.
    nvshmem_long_iput(back, mine, 1, 2, n / 2, right);
    long strided[n / 2];
    nvshmem_long_iget(strided, ring, 1, 2, n / 2, right);
    for (int i = 0; i < n / 2; ++i) expect(strided[i] == mine[2 * i], "iget from the right", strided[i], mine[2 * i]);
    const std::uint32_t mine32[2] = {0xabcd0000u + std::uint32_t(me), 7u};
    nvshmem_put32(words32, mine32, 2, right);
    nvshmemx_barrier_warpgroup(NVSHMEM_TEAM_WORLD);  // from host code the calling thread alone, as every group
    for (int i = 0; i < n / 2; ++i)
        expect(back[i] == 1000L * left + 2 * i, "iput from the left", back[i], 1000L * left + 2 * i);
    expect(words32[0] == 0xabcd0000u + std::uint32_t(left) && words32[1] == 7u, "put32 from the left", words32[0],
           0xabcd0000u + left);
    nvshmem_barrier_all();

    // putmem_signal: data to the right, then its flag; the right PE waits on its own flag.
    nvshmem_putmem_signal(back, mine, n * sizeof(long), flag, 1, NVSHMEM_SIGNAL_SET, right);
    nvshmem_signal_wait_until(flag, NVSHMEM_CMP_EQ, 1);
    for (int i = 0; i < n; ++i) expect(back[i] == 1000L * left + i, "putmem_signal data", back[i], 1000L * left + i);
    nvshmem_barrier_all();

    if (me == 0) {
        expect(*counter == npes, "counter on PE 0", *counter, npes);
        nvshmem_int_wait_until(counter, NVSHMEM_CMP_EQ, npes);
    }
    expect(ticket >= 0 && ticket < npes, "ticket", ticket, 0);
    expect(nvshmem_ptr(ring, right) != nullptr, "nvshmem_ptr is not NULL", 0, 1);
    expect(nvshmemx_mc_ptr(NVSHMEM_TEAM_WORLD, ring) == nullptr, "nvshmemx_mc_ptr is NULL (no multicast)", 1, 0);
    nvshmem_barrier_all();
    // Signals from host code (as the GPU program does with the heap on the GPU): every PE adds me + 1 to each PE's word.
    auto* added = static_cast<std::uint64_t*>(nvshmem_calloc(1, sizeof(std::uint64_t)));
    for (int pe = 0; pe < npes; ++pe) nvshmemx_signal_op(added, std::uint64_t(me + 1), NVSHMEM_SIGNAL_ADD, pe);
    nvshmem_barrier_all();
    expect(nvshmem_signal_fetch(added) == std::uint64_t(npes) * (npes + 1) / 2, "host signal_op adds, signal_fetch",
           (long long)nvshmem_signal_fetch(added), (long long)npes * (npes + 1) / 2);
    nvshmem_barrier_all();
    nvshmem_free(added);
    half_and_bfloat16(me, left, right);
    waits_over_words(slots, me, left, right);
    short_waits(me, left, right);
    sized_signal_strided_and_info(ring, flag, me, left, right);
    registered_buffer(ring, me, left, right);
    queue_pairs(ring, flag, me, left, right);
    nvshmem_free(slots);
    nvshmem_free(words32);
    nvshmem_free(word);
    nvshmem_free(flag);
    nvshmem_free(counter);
    nvshmem_free(back);
    nvshmem_free(ring);
    std::printf("PE %d of %d: ring from PE %d, ticket %d: %s\n", me, npes, left, ticket, wrong == 0 ? "ok" : "WRONG");
    nvshmem_finalize();
    return wrong == 0 ? 0 : 1;
}
