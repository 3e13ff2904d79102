// NVSHMEM's vocabulary as pgas provides it: the type tables the typed families are generated from, and the constants,
// handles and attribute types of its public API (written from NVSHMEM's documentation).
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include <cuda_bf16.h>  // __nv_bfloat16, NVSHMEM's bfloat16 (declared for a plain C++ compiler too)
#include <cuda_fp16.h>  // __half, NVSHMEM's half

// X-macro tables: each X(TYPE, TYPENAME) row generates one member of every typed family that takes that table.

/// NVSHMEM's bitwise AMO types (and, or, xor and their fetching forms).
#define PGAS_NVSHMEM_BITWISE_AMO_TYPES(X) \
    X(unsigned int, uint)                 \
    X(unsigned long, ulong)               \
    X(unsigned long long, ulonglong)      \
    X(std::int32_t, int32)                \
    X(std::int64_t, int64)                \
    X(std::uint32_t, uint32)              \
    X(std::uint64_t, uint64)

/// NVSHMEM's standard AMO types (fetch_add, add, fetch_inc, inc, compare_swap): the bitwise ones and the signed,
/// size and ptrdiff types.
#define PGAS_NVSHMEM_AMO_TYPES(X)     \
    PGAS_NVSHMEM_BITWISE_AMO_TYPES(X) \
    X(int, int)                       \
    X(long, long)                     \
    X(long long, longlong)            \
    X(std::size_t, size)              \
    X(std::ptrdiff_t, ptrdiff)

/// NVSHMEM's extended AMO types (fetch, set, swap): the standard ones and float, double.
#define PGAS_NVSHMEM_EXTENDED_AMO_TYPES(X) \
    PGAS_NVSHMEM_AMO_TYPES(X)              \
    X(float, float)                        \
    X(double, double)

/// NVSHMEM's standard RMA types (p, g, put, get and their _nbi, _warp, _block forms): the extended AMO types, the
/// 1- and 2-byte integers, half and bfloat16.
#define PGAS_NVSHMEM_RMA_TYPES(X)      \
    PGAS_NVSHMEM_EXTENDED_AMO_TYPES(X) \
    X(char, char)                      \
    X(signed char, schar)              \
    X(short, short)                    \
    X(unsigned char, uchar)            \
    X(unsigned short, ushort)          \
    X(std::int8_t, int8)               \
    X(std::int16_t, int16)             \
    X(std::uint8_t, uint8)             \
    X(std::uint16_t, uint16)           \
    X(__half, half)                    \
    X(__nv_bfloat16, bfloat16)

/// NVSHMEM's point-to-point synchronisation types (wait_until, test and their _all/_any/_some and _vector forms): the
/// standard AMO types, short and unsigned short.
#define PGAS_NVSHMEM_WAIT_TYPES(X) \
    PGAS_NVSHMEM_AMO_TYPES(X)      \
    X(short, short)                \
    X(unsigned short, ushort)

/// NVSHMEM's reduction types that take the bitwise operations (and, or, xor) as well as the arithmetic ones.
#define PGAS_NVSHMEM_BITWISE_REDUCE_TYPES(X) \
    X(unsigned char, uchar)                  \
    X(unsigned short, ushort)                \
    X(unsigned int, uint)                    \
    X(unsigned long, ulong)                  \
    X(unsigned long long, ulonglong)         \
    X(short, short)                          \
    X(int, int)                              \
    X(long, long)                            \
    X(long long, longlong)                   \
    X(std::int8_t, int8)                     \
    X(std::int16_t, int16)                   \
    X(std::int32_t, int32)                   \
    X(std::int64_t, int64)                   \
    X(std::uint8_t, uint8)                   \
    X(std::uint16_t, uint16)                 \
    X(std::uint32_t, uint32)                 \
    X(std::uint64_t, uint64)                 \
    X(std::size_t, size)

/// NVSHMEM's reduction types for the arithmetic operations (max, min, sum, prod): the bitwise ones, char, schar,
/// ptrdiff, float, double, half and bfloat16 (pgas reduces the last two in float).
#define PGAS_NVSHMEM_ARITH_REDUCE_TYPES(X) \
    PGAS_NVSHMEM_BITWISE_REDUCE_TYPES(X)   \
    X(char, char)                          \
    X(signed char, schar)                  \
    X(std::ptrdiff_t, ptrdiff)             \
    X(float, float)                        \
    X(double, double)                      \
    X(__half, half)                        \
    X(__nv_bfloat16, bfloat16)

/// The bitwise reduction operations: EACH(TYPE, TYPENAME, NVSHMEM's OP name, pgas::op's operator).
#define PGAS_NVSHMEM_BITWISE_REDUCE_OPS(EACH, TYPE, NAME) \
    EACH(TYPE, NAME, and, bit_and)                        \
    EACH(TYPE, NAME, or, bit_or)                          \
    EACH(TYPE, NAME, xor, bit_xor)

/// The arithmetic reduction operations, as PGAS_NVSHMEM_BITWISE_REDUCE_OPS.
#define PGAS_NVSHMEM_ARITH_REDUCE_OPS(EACH, TYPE, NAME) \
    EACH(TYPE, NAME, max, max)                          \
    EACH(TYPE, NAME, min, min)                          \
    EACH(TYPE, NAME, sum, sum)                          \
    EACH(TYPE, NAME, prod, prod)

/// A team handle, as NVSHMEM's: an integer passed by value, on the host and into kernels.
typedef std::int32_t nvshmem_team_t;

/// The predefined teams, with NVSHMEM's *_INDEX names for the same handles: NVSHMEM_TEAM_SHARED and
/// NVSHMEMX_TEAM_NODE are both this node's PEs (the ones that reach this PE by load/store);
/// NVSHMEMX_TEAM_SAME_MYPE_NODE the PEs whose index in their node is this PE's, one per node. Split teams get handles
/// from NVSHMEM_TEAMS_MIN up (4 and 5 are NVSHMEM's internal teams: no team here).
typedef enum : nvshmem_team_t {
    NVSHMEM_TEAM_INVALID = -1,
    NVSHMEM_TEAM_WORLD = 0,
    NVSHMEM_TEAM_WORLD_INDEX = 0,
    NVSHMEM_TEAM_SHARED = 1,
    NVSHMEM_TEAM_SHARED_INDEX = 1,
    NVSHMEMX_TEAM_NODE = 2,
    NVSHMEM_TEAM_NODE_INDEX = 2,
    NVSHMEMX_TEAM_SAME_MYPE_NODE = 3,
    NVSHMEM_TEAM_SAME_MYPE_NODE_INDEX = 3,
    NVSHMEM_TEAMS_MIN = 6,
    NVSHMEM_TEAM_INDEX_MAX = INT_MAX,
} nvshmem_team_id_t;

/// PE numbers with a meaning of their own: NVSHMEMX_PE_ALL (= NVSHMEMX_PE_ANY) asks nvshmemx_qp_quiet and
/// nvshmemx_qp_fence for every PE.
typedef enum {
    NVSHMEM_PE_INVALID = -1,
    NVSHMEMX_PE_ANY = 1 << 15,
    NVSHMEMX_PE_ALL = 1 << 15,
} nvshmem_pe_index_t;

/// Comparisons of wait_until, test and signal_wait_until.
enum nvshmem_cmp_type {
    NVSHMEM_CMP_EQ = 0,
    NVSHMEM_CMP_NE,
    NVSHMEM_CMP_GT,
    NVSHMEM_CMP_LE,
    NVSHMEM_CMP_LT,
    NVSHMEM_CMP_GE,
    NVSHMEM_CMP_SENTINEL = INT_MAX,
};

/// What signal_op and put_signal do to the signal word.
enum nvshmem_signal_op_type {
    NVSHMEM_SIGNAL_SET = 0,
    NVSHMEM_SIGNAL_ADD,
};

/// What NVSHMEM's own programs report errors with (its perftests' utilities call it): "<file>:<line>: <message>" on
/// stderr.
#define NVSHMEMI_ERROR_PRINT(...) \
    (std::fprintf(stderr, "%s:%d: ", __FILE__, __LINE__), std::fprintf(stderr, __VA_ARGS__), std::fputc('\n', stderr))

/// Return codes of the calls that return one (nvshmemx_init_attr, nvshmemx_collective_launch).
enum nvshmemx_status {
    NVSHMEMX_SUCCESS = 0,
    NVSHMEMX_ERROR_INVALID_VALUE,
    NVSHMEMX_ERROR_OUT_OF_MEMORY,
    NVSHMEMX_ERROR_NOT_SUPPORTED,
    NVSHMEMX_ERROR_SYMMETRY,
    NVSHMEMX_ERROR_GPU_NOT_SELECTED,
    NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED,
    NVSHMEMX_ERROR_INTERNAL,
    NVSHMEMX_ERROR_SENTINEL = INT_MAX,
};

/// The OpenSHMEM specification NVSHMEM's API follows (what nvshmem_info_get_version answers, as NVSHMEM's).
#define NVSHMEM_MAJOR_VERSION 1
#define NVSHMEM_MINOR_VERSION 3
/// The NVSHMEM release whose public API pgas::nvshmem provides (its headers were the reference for the entry-point
/// comparison): what nvshmemx_vendor_get_version_info answers and what programs that test the release see.
#define NVSHMEM_VENDOR_MAJOR_VERSION 3
#define NVSHMEM_VENDOR_MINOR_VERSION 4
#define NVSHMEM_VENDOR_PATCH_VERSION 0
#define NVSHMEM_VENDOR_VERSION \
    (NVSHMEM_VENDOR_MAJOR_VERSION * 10000 + NVSHMEM_VENDOR_MINOR_VERSION * 100 + NVSHMEM_VENDOR_PATCH_VERSION)
/// What nvshmem_info_get_name writes (NUL included, within NVSHMEM_MAX_NAME_LEN bytes).
#define NVSHMEM_VENDOR_STRING "pgas::nvshmem (NVSHMEM 3.4 API)"
#define NVSHMEM_MAX_NAME_LEN 256

/// Thread levels of nvshmem_init_thread and nvshmem_query_thread.
enum nvshmem_thread_level {
    NVSHMEM_THREAD_SINGLE = 0,
    NVSHMEM_THREAD_FUNNELED,
    NVSHMEM_THREAD_SERIALIZED,
    NVSHMEM_THREAD_MULTIPLE,
    NVSHMEM_THREAD_TYPE_SENTINEL = INT_MAX,
};

/// What nvshmemx_init_status answers: NOT_INITIALIZED, then IS_INITIALIZED, or FULL_MPG where PEs share a
/// GPU (several PEs per GPU, every call offered, as NVSHMEM answers with MPS). pgas never answers IS_BOOTSTRAPPED
/// (nvshmem_init does both steps at once) nor LIMITED_MPG (nothing is left out when PEs share a GPU).
typedef enum {
    NVSHMEM_STATUS_NOT_INITIALIZED = 0,
    NVSHMEM_STATUS_IS_BOOTSTRAPPED,
    NVSHMEM_STATUS_IS_INITIALIZED,
    NVSHMEM_STATUS_LIMITED_MPG,
    NVSHMEM_STATUS_FULL_MPG,
    NVSHMEM_STATUS_INVALID = INT_MAX,
} nvshmemx_init_status_t;

/// nvshmemx_init_attr's flags: 0 (as nvshmem_init), NVSHMEMX_INIT_WITH_UNIQUEID and NVSHMEMX_INIT_WITH_MPI_COMM (where
/// <mpi.h> is included first) are honoured; the others are answered with NVSHMEMX_ERROR_NOT_SUPPORTED and a message
/// naming the flag.
enum nvshmemx_init_flags : unsigned int {
    NVSHMEMX_INIT_THREAD_PES = 1u,
    NVSHMEMX_INIT_WITH_MPI_COMM = 1u << 1,
    NVSHMEMX_INIT_WITH_SHMEM = 1u << 2,
    NVSHMEMX_INIT_WITH_UNIQUEID = 1u << 3,
    NVSHMEMX_INIT_MAX = 1u << 31,
};

/// What one PE makes with nvshmemx_get_uniqueid and every PE passes to nvshmemx_set_attr_uniqueid_args: 128 bytes
/// (pgas writes the rendezvous address and the launch's token in them, as text).
typedef struct {
    int version;
    char internal[124];
} nvshmemx_uniqueid_t;

/// A unique id with nothing in it.
#define NVSHMEMX_UNIQUEID_INITIALIZER \
    {}

/// nvshmemx_set_attr_uniqueid_args's part of the attributes: this rank, the rank count and the address of rank 0's
/// unique id, which must stay alive until nvshmemx_init_attr returns (as NVSHMEM's).
typedef struct {
    int version;
    nvshmemx_uniqueid_t* id;
    int myrank;
    int nranks;
} nvshmemx_uniqueid_args_t;

/// The unique-id arguments with nothing set.
#define NVSHMEMX_UNIQUEID_ARGS_INITIALIZER \
    { 0, NULL, -1, -1 }

/// What NVSHMEMX_INIT_ATTR_INITIALIZER writes in args.version: only then is args.cuda_device_id read (a program may
/// declare the attributes without an initializer and set only the fields its flags need).
#define PGAS_NVSHMEM_INIT_ARGS_V2 (2 << 16)

/// nvshmemx_init_attr's arguments: the unique id's, and the GPU this PE starts on (cuda_device_id, an index among
/// the visible GPUs; -1: the GPU the program made current, else the launcher's local rank modulo the visible GPUs).
typedef struct {
    int version;
    nvshmemx_uniqueid_args_t uid_args;
    int cuda_device_id;
    char content[96];
} nvshmemx_init_args_t;

/// nvshmemx_init_attr's attributes, in NVSHMEM's shape: the MPI communicator's address for
/// NVSHMEMX_INIT_WITH_MPI_COMM, and `args`.
typedef struct {
    int version;
    void* mpi_comm;
    nvshmemx_init_args_t args;
} nvshmemx_init_attr_t;

/// An attribute set with nothing chosen (no MPI communicator, no unique id, cuda_device_id -1).
#define NVSHMEMX_INIT_ATTR_INITIALIZER                                               \
    {                                                                                \
        0, NULL, {                                                                   \
            PGAS_NVSHMEM_INIT_ARGS_V2, NVSHMEMX_UNIQUEID_ARGS_INITIALIZER, -1, { 0 } \
        }                                                                            \
    }
