// The launchers world::init() understands, as one table: which variable gives rank, size, node-local rank and
// size, the job's identity and the rendezvous, per launcher (read_launch_env walks it; pgas-info prints it).
#pragma once

#include <pgas/core/config.hpp>

#include <array>

PGAS_NAMESPACE_BEGIN
namespace detail {

// Where a launcher's processes meet when PGAS_ROOT does not say (on one node the non-pgasrun launchers meet at a
// private Unix-domain socket named by the job's identity).
enum class rendezvous_rule {
    pgas_root,         // PGAS_ROOT is required, and PGAS_TOKEN with it (pgasrun sets both)
    master_port_next,  // across nodes MASTER_ADDR:MASTER_PORT+1 (the launcher's own store holds MASTER_PORT)
    master_when_set,   // across nodes MASTER_ADDR:MASTER_PORT+1 when both are set, else node_list's first host
};

// One launcher's variables; nullptr where it has none.
struct launcher_vars {
    const char* source;                // named in messages ("torchrun", ...)
    const char* rank;                  // this process's PE; set, it selects the launcher
    std::array<const char*, 2> size;   // number of PEs: the first that is set
    bool size_selects;                 // size[0] alone selects the launcher too
    const char* required_because;      // why rank and size are required; nullptr: "<the other> is set"
    const char* local_rank;            // index among the processes of this node
    const char* local_size;            // processes on this node; nullptr: size when `nodes` says 1
    std::array<const char*, 2> nodes;  // nodes of the job: the first that is set
    std::array<const char*, 4> job;    // the job's identity: names the one-node socket and its token
    char job_join;                     // joins job's values; '\0': the first that is set
    bool parent_names_job;             // without a job identity on one node, the launcher daemon's pid names it
    rendezvous_rule rendezvous;
    std::array<const char*, 2> node_list;  // the job's hosts (first that is set): the rendezvous is the first one's
};

// The variables of the rendezvous rules master_port_next and master_when_set.
inline constexpr const char* master_addr = "MASTER_ADDR";
inline constexpr const char* master_port = "MASTER_PORT";

// pgas's own rendezvous variables (rule pgas_root), beside its row of the table below: where the PEs meet, the
// secret they show there, and the pipe a launcher reads the PEs' progress from. pgasrun writes what
// read_launch_env reads, by these names.
inline constexpr const char* root_var = "PGAS_ROOT";
inline constexpr const char* token_var = "PGAS_TOKEN";
inline constexpr const char* status_fd_var = "PGAS_STATUS_FD";

// First match wins, in this order.
inline constexpr launcher_vars launchers[] = {
    {.source = "PGAS_* variables",
     .rank = "PGAS_RANK",
     .size = {"PGAS_WORLD_SIZE"},
     .size_selects = true,
     .required_because = nullptr,
     .local_rank = "PGAS_LOCAL_RANK",
     .local_size = "PGAS_LOCAL_SIZE",
     .nodes = {},
     .job = {},
     .job_join = '\0',
     .parent_names_job = true,
     .rendezvous = rendezvous_rule::pgas_root,
     .node_list = {}},
    {.source = "torchrun",
     .rank = "RANK",
     .size = {"WORLD_SIZE"},
     .size_selects = true,
     .required_because = nullptr,
     .local_rank = "LOCAL_RANK",
     .local_size = "LOCAL_WORLD_SIZE",
     .nodes = {},
     // The run id is "none" unless --rdzv-id is given: the master address and port and the restart count still
     // separate concurrent and restarted jobs.
     .job = {"TORCHELASTIC_RUN_ID", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RESTART_COUNT"},
     .job_join = '|',
     .parent_names_job = true,
     .rendezvous = rendezvous_rule::master_port_next,
     .node_list = {}},
    {.source = "Open MPI",
     .rank = "OMPI_COMM_WORLD_RANK",
     .size = {"OMPI_COMM_WORLD_SIZE"},
     .size_selects = true,
     .required_because = nullptr,
     .local_rank = "OMPI_COMM_WORLD_LOCAL_RANK",
     .local_size = "OMPI_COMM_WORLD_LOCAL_SIZE",
     .nodes = {},
     .job = {"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid"},  // Open MPI 4 and 5, else the ORTE job id
     .job_join = '\0',
     .parent_names_job = true,
     .rendezvous = rendezvous_rule::master_when_set,
     .node_list = {}},
    {.source = "MPICH (Hydra)",  // also Intel MPI's mpirun
     .rank = "PMI_RANK",
     .size = {"PMI_SIZE"},
     .size_selects = true,
     .required_because = nullptr,
     .local_rank = "MPI_LOCALRANKID",
     .local_size = "MPI_LOCALNRANKS",
     .nodes = {},
     .job = {"PMI_KVSNAME"},
     .job_join = '\0',
     .parent_names_job = true,
     .rendezvous = rendezvous_rule::master_when_set,
     .node_list = {}},
    // srun sets SLURM_STEP_NUM_TASKS; SLURM_NTASKS is the allocation's (also set in an salloc shell, which is no
    // launch: only SLURM_PROCID selects Slurm). The node-local size is known only on one node, where it is the size.
    {.source = "Slurm",
     .rank = "SLURM_PROCID",
     .size = {"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"},
     .size_selects = false,
     .required_because = "srun sets it",
     .local_rank = "SLURM_LOCALID",
     .local_size = nullptr,
     .nodes = {"SLURM_STEP_NUM_NODES", "SLURM_NNODES"},
     .job = {"SLURM_JOB_ID", "SLURM_STEP_ID"},
     .job_join = '.',
     .parent_names_job = false,
     .rendezvous = rendezvous_rule::master_when_set,
     .node_list = {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST"}},
};

// pgas's own launcher's row (pgasrun sets its variables).
inline constexpr const launcher_vars& pgas_launcher = launchers[0];

}  // namespace detail
PGAS_NAMESPACE_END
