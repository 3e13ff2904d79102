// pgas::ibgda_options: how an ibgda_domain sets itself up (NIC kind, channels, queue sizes, queue memory).
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/core/runtime_state.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

PGAS_NAMESPACE_BEGIN

/// How pgas::ibgda_domain sets itself up.
struct ibgda_options {
    /// Which NIC serves the queue pairs.
    enum class nic_kind {
        hardware,  ///< an mlx5 NIC through rdma-core (errc::transport_unavailable where there is none)
        emulated,  ///< ibgda_emulated_nic: a host thread plays the NIC (tests, CI, the GPU protocol suite)
    };
    /// A hardware NIC (default) or the emulated one.
    nic_kind nic = nic_kind::hardware;
    /// RC queue pairs per peer, one per channel (device::context::on_channel), each with its own send queue,
    /// doorbell record, doorbell and CQ; in [1, pgas::max_channels]; 0: the world's (world_options::channels,
    /// PGAS_CHANNELS; default 1).
    int channels = 0;
    /// Building blocks (64 bytes) per send queue: a power of two in [4, 2^15].
    std::uint32_t send_queue_blocks = 256;
    /// nbi puts/gets ring the doorbell once this many blocks are pending (and
    /// at quiet/fence or any blocking op); 1 rings on every post.
    std::uint32_t doorbell_batch = 1;
    /// CQEs per completion queue: 1 is a collapsed CQ (what DEVX setups use);
    /// more is a ring read by owner bit (what rdma-core's verbs CQs are), at
    /// least send_queue_blocks so it cannot overrun. Emulated NIC only.
    std::uint32_t cq_entries = 1;
    /// Memory for queues, doorbell records, CQEs, counters and scratch: it must
    /// be reachable by the producers (host threads, or the GPU: pass
    /// cudaHostAlloc'd mapped memory) and by the NIC. Default: zeroed host memory.
    std::function<void*(std::size_t)> allocate;
    /// Frees what allocate returned (set both or neither).
    std::function<void(void*)> deallocate;
    /// How many buffers besides the heap register_buffer may add per PE.
    int max_registered_buffers = 14;
    /// Hardware: map the send queues, CQs, doorbell records and the UAR
    /// doorbell into the GPU (cudaHostRegister) so kernels can produce. When the
    /// UAR cannot be mapped (cudaHostRegisterIoMemory refused), a CPU thread
    /// rings it for them, and the log says so.
    bool map_for_gpu = true;
    /// Timeout and peer-failure flag of the contexts; empty: the world's. A
    /// kernel needs a flag in memory it can read (the world's is host memory).
    std::optional<runtime_state> runtime;
};

PGAS_NAMESPACE_END
