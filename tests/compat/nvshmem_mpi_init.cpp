// An NVSHMEM program started from MPI (NVSHMEMX_INIT_WITH_MPI_COMM, <mpi.h> before <nvshmem.h> as NVSHMEM's MPI
// examples have it), on a communicator whose ranks run opposite to MPI_COMM_WORLD's: each PE must be its rank in that
// communicator, and a ring of puts must go round it. Mode world: MPI_COMM_WORLD itself. Mode null_comm:
// attr.mpi_comm NULL, a clear error. Built with MPI_AFTER_NVSHMEM, <nvshmem.h> comes first (as in programs whose own
// headers bring <mpi.h> later): MPI_COMM_WORLD must work, and the reversed communicator be refused, saying why.
#ifdef MPI_AFTER_NVSHMEM
#include <nvshmem.h>
#include <nvshmemx.h>

#include <mpi.h>
#else
#include <mpi.h>

#include <nvshmem.h>
#include <nvshmemx.h>
#endif

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int world_rank = 0, world_size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Comm reversed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, world_size - 1 - world_rank, &reversed);
    int rank = 0;
    MPI_Comm_rank(reversed, &rank);

    const char* mode = argc > 1 ? argv[1] : "";
    MPI_Comm world = MPI_COMM_WORLD;
    if (std::strcmp(mode, "world") == 0) rank = world_rank;
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    nvshmemx_set_attr_mpi_comm_args(std::strcmp(mode, "null_comm") == 0 ? nullptr
                                    : std::strcmp(mode, "world") == 0   ? &world
                                                                        : &reversed,
                                    &attr);
    if (nvshmemx_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM, &attr) != 0) {
        std::printf("rank %d: nvshmemx_init_attr failed\n", world_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    int* slot = static_cast<int*>(nvshmem_malloc(sizeof(int)));
    nvshmem_int_p(slot, 1000 + me, (me + 1) % n);
    nvshmem_barrier_all();
    const int from = (me + n - 1) % n;
    const bool ok = me == rank && n == world_size && *slot == 1000 + from;
    std::printf("world rank %d: PE %d of %d (rank %d in the communicator), got %d from PE %d: %s\n", world_rank, me, n,
                rank, *slot, from, ok ? "ok" : "WRONG");
    nvshmem_free(slot);
    nvshmem_finalize();
    MPI_Comm_free(&reversed);
    MPI_Finalize();
    return ok ? 0 : 1;
}
