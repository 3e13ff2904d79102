// NVSHMEM calls made wrongly, one per run (argv[1] names it): each must end the process with a message naming the
// call, the PE and the value, or return what NVSHMEM returns (NULL for a size beyond the heap).
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "";
    if (std::strcmp(mode, "before_init") == 0) {
        std::printf("my_pe before init: %d\n", nvshmem_my_pe());  // must not return
        return 0;
    }
    if (std::strcmp(mode, "init_attr_flags") == 0) {
        // A flag pgas does not offer, then the MPI one from a TU without <mpi.h>: neither initialises anything.
        nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
        const int shmem = nvshmemx_init_attr(NVSHMEMX_INIT_WITH_SHMEM, &attr);
        const int mpi = nvshmemx_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM, &attr);
        std::printf("nvshmemx_init_attr returned %d and %d, status %d\n", shmem, mpi, nvshmemx_init_status());
        return shmem == NVSHMEMX_ERROR_NOT_SUPPORTED && mpi == NVSHMEMX_ERROR_NOT_SUPPORTED &&
                       nvshmemx_init_status() == NVSHMEM_STATUS_NOT_INITIALIZED
                   ? 0
                   : 1;
    }
    if (std::strcmp(mode, "bad_uniqueid") == 0 || std::strcmp(mode, "uniqueid_rank") == 0) {
        nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;  // never filled by nvshmemx_get_uniqueid
        if (std::strcmp(mode, "uniqueid_rank") == 0) nvshmemx_get_uniqueid(&id);
        nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
        nvshmemx_set_attr_uniqueid_args(std::strcmp(mode, "uniqueid_rank") == 0 ? 5 : 0, 2, &id, &attr);
        nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr);  // must not return
        return 0;
    }
    if (std::strcmp(mode, "uniqueid_missing") == 0) {  // NVSHMEMX_INIT_WITH_UNIQUEID without set_attr_uniqueid_args
        nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
        nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr);  // must not return
        return 0;
    }
    if (std::strcmp(mode, "register_symmetric") == 0) {  // the host transport has no GPU heap to map a buffer into
        nvshmem_init();
        static char buffer[4096];
        void* mapped = nvshmemx_buffer_register_symmetric(buffer, sizeof buffer, 0);
        const int unregistered = nvshmemx_buffer_unregister_symmetric(buffer, sizeof buffer);
        std::printf("register_symmetric returned %s, unregister_symmetric %d\n", mapped ? "an address" : "NULL",
                    unregistered);
        nvshmem_finalize();
        return mapped == nullptr && unregistered == NVSHMEMX_ERROR_INVALID_VALUE ? 0 : 1;
    }
    if (std::strcmp(mode, "loaded_code") == 0) {  // modules and libraries loaded at run time: refused, saying so
        nvshmem_init();
        const int module = nvshmemx_cumodule_init(nullptr), library = nvshmemx_culibrary_init(nullptr);
        std::printf("cumodule_init returned %d, culibrary_init %d\n", module, library);
        nvshmem_finalize();
        return module == NVSHMEMX_ERROR_NOT_SUPPORTED && library == NVSHMEMX_ERROR_NOT_SUPPORTED ? 0 : 1;
    }
    if (std::strcmp(mode, "team_uniqueid") == 0) {  // teams from a unique id: refused, saying so; the handle invalid
        nvshmem_init();
        nvshmemx_team_uniqueid_t id = 0;
        const int get = nvshmemx_team_get_uniqueid(&id);
        nvshmem_team_config_t config = NVSHMEM_TEAM_CONFIG_INITIALIZER;
        config.uniqueid = id;
        nvshmem_team_t team = NVSHMEM_TEAM_WORLD;
        const int init = nvshmemx_team_init(&team, &config, NVSHMEM_TEAM_CONFIG_MASK_UNIQUEID, 1, 0);
        std::printf("team_get_uniqueid returned %d, team_init %d, team %s\n", get, init,
                    team == NVSHMEM_TEAM_INVALID ? "invalid" : "set");
        nvshmem_finalize();
        return get == NVSHMEMX_ERROR_NOT_SUPPORTED && init == NVSHMEMX_ERROR_NOT_SUPPORTED ? 0 : 1;
    }
    if (std::strcmp(mode, "global_exit") == 0) {  // every PE: the process ends with the status, saying so
        nvshmem_init();
        nvshmem_global_exit(3);
        std::printf("nvshmem_global_exit returned\n");
        return 0;
    }
    if (std::strcmp(mode, "error_print") == 0) {  // NVSHMEM's perftests report with it
        NVSHMEMI_ERROR_PRINT("value %d", 7);
        return 0;
    }
    nvshmem_init();
    if (std::strcmp(mode, "after_finalize") == 0) {
        nvshmem_finalize();
        nvshmem_barrier_all();  // must not return
        return 0;
    }
    if (std::strcmp(mode, "qp_handles") == 0) {  // no QPs asked for: refused; then a handle no create returned
        nvshmemx_qp_handle_t* qps = nullptr;
        const int none = nvshmemx_qp_create(0, &qps);
        std::printf("nvshmemx_qp_create(0) returned %d\n", none);
        std::fflush(stdout);
        if (none != NVSHMEMX_ERROR_INVALID_VALUE || qps != nullptr) return 1;
        int* word = static_cast<int*>(nvshmem_malloc(sizeof(int)));
        nvshmemx_qp_int_p(word, 1, nvshmem_my_pe(), -2);  // must not return
        return 0;
    }
    if (std::strcmp(mode, "symmetric_size") == 0) {  // run with NVSHMEM_SYMMETRIC_SIZE=8M, PGAS_HEAP_SIZE=16M
        // as NVSHMEM's perftests: two small buffers, then exactly the size asked for; then more than ever fits
        void* small[2] = {nvshmem_malloc(sizeof(double)), nvshmem_malloc(sizeof(double))};
        void* eight = nvshmem_malloc(std::size_t(8) << 20);
        void* twelve = nvshmem_malloc(std::size_t(12) << 20);
        std::printf("small: %s; 8 MiB: %s; 12 MiB: %s\n", small[0] && small[1] ? "blocks" : "NULL",
                    eight ? "a block" : "NULL", twelve ? "a block" : "NULL");
        nvshmem_finalize();
        return 0;
    }
    if (std::strcmp(mode, "beyond_heap") == 0) {
        void* huge = nvshmem_malloc(std::size_t(1) << 50);
        void* fine = nvshmem_malloc(64);  // the heap still works afterwards
        std::printf("beyond the heap: %s; 64 bytes: %s\n", huge ? "a block" : "NULL", fine ? "a block" : "NULL");
        nvshmem_free(fine);
        nvshmem_finalize();
        return huge == nullptr && fine != nullptr ? 0 : 1;
    }
    int* word = static_cast<int*>(nvshmem_malloc(sizeof(int)));
    if (std::strcmp(mode, "pe_out_of_range") == 0) nvshmem_int_p(word, 1, nvshmem_n_pes() + 3);  // must not return
    if (std::strcmp(mode, "not_symmetric") == 0) {
        int local = 0;
        nvshmem_int_p(&local, 1, 0);  // must not return
    }
    if (std::strcmp(mode, "bad_comparison") == 0) nvshmem_int_test_any(word, 1, nullptr, 42, 0);  // must not return
    if (std::strcmp(mode, "not_a_team") == 0) nvshmem_int_sum_reduce(7, word, word, 1);           // must not return
    if (std::strcmp(mode, "invalid_team") == 0) nvshmem_barrier(NVSHMEM_TEAM_INVALID);            // must not return
    if (std::strcmp(mode, "destroyed_team") == 0) {
        nvshmem_team_t copy = NVSHMEM_TEAM_INVALID;
        nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 1, nvshmem_n_pes(), nullptr, 0, &copy);
        nvshmem_team_destroy(copy);
        nvshmem_int_sum_reduce(copy, word, word, 1);  // must not return
    }
    if (std::strcmp(mode, "maxloc_overlap") == 0) {  // dest one pair past source, two pairs each
        double2* pairs = static_cast<double2*>(nvshmem_malloc(3 * sizeof(double2)));
        nvshmem_double2_maxloc_reduce(NVSHMEM_TEAM_WORLD, pairs + 1, pairs, 2);  // must not return
    }
    if (std::strcmp(mode, "destroy_world") == 0) nvshmem_team_destroy(NVSHMEM_TEAM_WORLD);  // must not return
    if (std::strcmp(mode, "destroy_same_mype_node") == 0) nvshmem_team_destroy(NVSHMEMX_TEAM_SAME_MYPE_NODE);  // ditto
    // Run with PGAS_NODE_SIZE=2 by 3 processes: nodes of 2 and 1 PEs, so no team of each node's i-th PE.
    if (std::strcmp(mode, "uneven_nodes") == 0) nvshmem_int_sum_reduce(NVSHMEMX_TEAM_SAME_MYPE_NODE, word, word, 1);
    if (std::strcmp(mode, "collective_launch") == 0) {
        // No GPU here (host transport): the launch cannot happen, and says so with NVSHMEM's code.
        const int status = nvshmemx_collective_launch(nullptr, dim3(1), dim3(1), nullptr, 0, nullptr);
        std::printf("nvshmemx_collective_launch returned %d\n", status);
        nvshmem_finalize();
        return status == NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED ? 0 : 1;
    }
    std::printf("%s: returned\n", mode);
    return 0;
}
