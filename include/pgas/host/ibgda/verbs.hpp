// rdma-core on the host: finding an mlx5 device for IBGDA (or saying why there is none), and its verbs resources.
#pragma once

#include <pgas/core/error.hpp>

#include <pgas/transport/ibgda/queue.hpp>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if __has_include(<infiniband/verbs.h>) && __has_include(<infiniband/mlx5dv.h>)
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>
#define PGAS_HAVE_RDMA_CORE 1
#else
#define PGAS_HAVE_RDMA_CORE 0
#endif

PGAS_NAMESPACE_BEGIN
namespace detail {

// The RDMA devices rdma-core lists, by name, or an error naming why there are
// none: no rdma-core headers at build time, ibv_get_device_list failing (with
// errno: ENOSYS when the kernel has no RDMA support, as in containers without
// /dev/infiniband), or an empty list.
inline std::vector<std::string> ibgda_device_names(int pe) {
#if PGAS_HAVE_RDMA_CORE
    int count = 0;
    errno = 0;
    ibv_device** list = ibv_get_device_list(&count);
    if (list == nullptr) {
        const int e = errno;
        throw_error(errc::transport_unavailable, pe, "ibgda",
                    std::string("no RDMA device: ibv_get_device_list failed (errno ") + std::to_string(e) + ", " +
                        std::strerror(e) +
                        "); IBGDA needs an mlx5 (ConnectX/BlueField) NIC and its kernel driver. Use another "
                        "transport, or ibgda_options::nic = emulated for tests");
    }
    std::vector<std::string> names;
    for (int i = 0; i < count; ++i) names.emplace_back(ibv_get_device_name(list[i]));
    ibv_free_device_list(list);
    if (names.empty())
        throw_error(errc::transport_unavailable, pe, "ibgda",
                    "no RDMA device: ibv_get_device_list found none; IBGDA needs an mlx5 (ConnectX/BlueField) NIC. Use "
                    "another transport, or ibgda_options::nic = emulated for tests");
    return names;
#else
    throw_error(errc::transport_unavailable, pe, "ibgda",
                "no RDMA device: pgas was compiled without rdma-core's headers (<infiniband/mlx5dv.h>); install "
                "libibverbs-dev and rebuild");
#endif
}

// The device for this PE: PGAS_IB_HCA (a device name) when set, else the
// first mlx5 device. Throws when the named device is missing.
inline std::string ibgda_pick_device(int pe) {
    const std::vector<std::string> names = ibgda_device_names(pe);
    if (const char* wanted = std::getenv("PGAS_IB_HCA"); wanted && *wanted) {
        for (const auto& n : names)
            if (n == wanted) return n;
        std::string all;
        for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
        throw_error(errc::transport_unavailable, pe, "ibgda",
                    std::string("PGAS_IB_HCA=") + wanted + " names no RDMA device (found: " + all + ")");
    }
    for (const auto& n : names)
        if (n.rfind("mlx5", 0) == 0) return n;
    return names.front();
}

#if PGAS_HAVE_RDMA_CORE
// What one PE tells the others to connect to it (all-gathered): its port's
// address and its heap's. The QP numbers follow in a separate table.
struct ibgda_verbs_address {
    std::uint8_t gid[16] = {};
    std::uint16_t lid = 0;
    std::uint8_t ethernet = 0;  // RoCE: route by GID
    std::uint8_t mtu = 0;       // ibv_mtu
    std::uint32_t rkey = 0;
    std::uint64_t heap = 0;
    std::uint64_t heap_bytes = 0;
};

// The rdma-core objects of one local PE: device context, protection domain,
// memory registrations, and one RC QP with its CQ per peer, created through
// verbs and opened with mlx5dv_init_obj so the producers can build WQEs in
// their send queues directly. The queues are host memory that libmlx5
// allocates (the fallback of DESIGN.md §4; DEVX queues in GPU memory are not
// built yet). Written against rdma-core's documented API; never run here
// (no RDMA device): docs/ibgda.md says so.
class ibgda_verbs {
public:
    struct queue {
        ibv_cq* cq = nullptr;
        ibv_qp* qp = nullptr;
        mlx5dv_qp dv_qp{};
        mlx5dv_cq dv_cq{};
    };

    ibgda_verbs(int pe, const std::string& device_name) : pe_(pe) {
        int count = 0;
        ibv_device** list = ibv_get_device_list(&count);
        for (int i = 0; list && i < count; ++i)
            if (device_name == ibv_get_device_name(list[i])) context_ = ibv_open_device(list[i]);
        if (list) ibv_free_device_list(list);
        if (!context_) fail("ibv_open_device(" + device_name + ")");
        if (!mlx5dv_is_supported(context_->device))
            throw_error(errc::transport_unavailable, pe, "ibgda", device_name + " is not an mlx5 device");
        pd_ = ibv_alloc_pd(context_);
        if (!pd_) fail("ibv_alloc_pd");
        ibv_device_attr attr{};
        if (ibv_query_device(context_, &attr) != 0) fail("ibv_query_device");
        if (attr.atomic_cap == IBV_ATOMIC_NONE)
            throw_error(errc::transport_unavailable, pe, "ibgda",
                        device_name + " has no remote atomics (atomic_cap NONE)");
        port_ = std::uint8_t(env_int("PGAS_IB_PORT", 1));
        if (ibv_query_port(context_, port_, &port_attr_) != 0) fail("ibv_query_port");
        if (port_attr_.state != IBV_PORT_ACTIVE)
            throw_error(errc::transport_unavailable, pe, "ibgda",
                        device_name + " port " + std::to_string(port_) + " is not active");
        ethernet_ = port_attr_.link_layer == IBV_LINK_LAYER_ETHERNET;
        gid_index_ = env_int("PGAS_IB_GID_INDEX", ethernet_ ? 3 : 0);  // RoCE v2 is commonly GID 3
        if (ibv_query_gid(context_, port_, gid_index_, &gid_) != 0) fail("ibv_query_gid");
    }
    ibgda_verbs(const ibgda_verbs&) = delete;
    ibgda_verbs& operator=(const ibgda_verbs&) = delete;
    ~ibgda_verbs() {
        for (auto& q : queues_) {
            if (q.qp) ibv_destroy_qp(q.qp);
            if (q.cq) ibv_destroy_cq(q.cq);
        }
        for (ibv_mr* mr : mrs_) ibv_dereg_mr(mr);
        if (pd_) ibv_dealloc_pd(pd_);
        if (context_) ibv_close_device(context_);
    }

    // Registers local memory for local and remote access. A dma-buf fd (GPU
    // memory exported by the CUDA driver; `address` lies `dmabuf_offset` bytes
    // into it) is tried first when given, then the plain path (host memory, or
    // GPU memory through nvidia-peermem). The caller keeps the fd.
    ibv_mr* register_memory(void* address, std::size_t bytes, int dmabuf_fd = -1, std::uint64_t dmabuf_offset = 0) {
        const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                           IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_RELAXED_ORDERING;
        ibv_mr* mr = nullptr;
        if (dmabuf_fd >= 0)
            mr = ibv_reg_dmabuf_mr(pd_, dmabuf_offset, bytes, reinterpret_cast<std::uint64_t>(address), dmabuf_fd,
                                   access);
        if (!mr) mr = ibv_reg_mr(pd_, address, bytes, access);
        if (!mr) fail("ibv_reg_mr of " + std::to_string(bytes) + " bytes");
        mrs_.push_back(mr);
        return mr;
    }

    // Deregisters what register_memory returned (a released window's buffer).
    void deregister(ibv_mr* mr) {
        for (auto at = mrs_.begin(); at != mrs_.end(); ++at)
            if (*at == mr) {
                ibv_dereg_mr(mr);
                mrs_.erase(at);
                return;
            }
    }

    // An RC QP whose send queue has at least `blocks` building blocks and
    // holds 2-block WQEs (92 inline bytes), with a CQ of at least as many CQEs.
    queue create_queue(std::uint32_t blocks) {
        queue q;
        q.cq = ibv_create_cq(context_, int(blocks), nullptr, nullptr, 0);
        if (!q.cq) fail("ibv_create_cq");
        ibv_qp_init_attr init{};
        init.send_cq = q.cq;
        init.recv_cq = q.cq;
        init.qp_type = IBV_QPT_RC;
        init.sq_sig_all = 0;  // selective signalling: only WQEs with CQ update write CQEs
        init.cap.max_send_wr = blocks / 2;
        init.cap.max_recv_wr = 1;
        init.cap.max_send_sge = 1;
        init.cap.max_recv_sge = 1;
        init.cap.max_inline_data = 92;
        q.qp = ibv_create_qp(pd_, &init);
        if (!q.qp) fail("ibv_create_qp (RC, " + std::to_string(blocks) + " send blocks)");
        mlx5dv_obj obj{};
        obj.qp.in = q.qp;
        obj.qp.out = &q.dv_qp;
        obj.cq.in = q.cq;
        obj.cq.out = &q.dv_cq;
        if (mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ) != 0) fail("mlx5dv_init_obj");
        if (q.dv_qp.sq.stride != 64 || q.dv_cq.cqe_size != 64)
            throw_error(errc::transport_unavailable, pe_, "ibgda",
                        "unexpected mlx5 queue geometry (send stride " + std::to_string(q.dv_qp.sq.stride) +
                            ", CQE size " + std::to_string(q.dv_cq.cqe_size) + "; unset MLX5_CQE_SIZE)");
        queues_.push_back(q);
        return q;
    }

    ibgda_verbs_address address() const {
        ibgda_verbs_address a;
        std::memcpy(a.gid, gid_.raw, 16);
        a.lid = port_attr_.lid;
        a.ethernet = ethernet_ ? 1 : 0;
        a.mtu = std::uint8_t(port_attr_.active_mtu);
        return a;
    }

    // RESET -> INIT -> RTR -> RTS towards the remote QP `remote_qpn` at `remote`.
    void connect(ibv_qp* qp, std::uint32_t remote_qpn, const ibgda_verbs_address& remote) {
        ibv_qp_attr a{};
        a.qp_state = IBV_QPS_INIT;
        a.pkey_index = 0;
        a.port_num = port_;
        a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
        modify(qp, a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, "INIT");
        a = {};
        a.qp_state = IBV_QPS_RTR;
        a.path_mtu = ibv_mtu(remote.mtu < int(port_attr_.active_mtu) ? int(remote.mtu) : int(port_attr_.active_mtu));
        a.dest_qp_num = remote_qpn;
        a.rq_psn = 0;
        a.max_dest_rd_atomic = 16;
        a.min_rnr_timer = 12;
        a.ah_attr.port_num = port_;
        if (remote.ethernet) {
            a.ah_attr.is_global = 1;
            std::memcpy(a.ah_attr.grh.dgid.raw, remote.gid, 16);
            a.ah_attr.grh.sgid_index = std::uint8_t(gid_index_);
            a.ah_attr.grh.hop_limit = 255;
        } else {
            a.ah_attr.dlid = remote.lid;
        }
        modify(qp, a,
               IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
               "RTR");
        a = {};
        a.qp_state = IBV_QPS_RTS;
        a.timeout = 14;
        a.retry_cnt = 7;
        a.rnr_retry = 7;
        a.sq_psn = 0;
        a.max_rd_atomic = 16;
        modify(qp, a,
               IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                   IBV_QP_MAX_QP_RD_ATOMIC,
               "RTS");
    }

private:
    static int env_int(const char* name, int fallback) {
        const char* v = std::getenv(name);
        return v && *v ? std::atoi(v) : fallback;
    }
    [[noreturn]] void fail(const std::string& what) const {
        const int e = errno;
        throw_error(errc::transport_unavailable, pe_, "ibgda",
                    what + " failed (errno " + std::to_string(e) + ", " + std::strerror(e) + ")");
    }
    void modify(ibv_qp* qp, ibv_qp_attr& a, int mask, const char* state) {
        if (ibv_modify_qp(qp, &a, mask) != 0) fail(std::string("ibv_modify_qp to ") + state);
    }

    int pe_;
    ibv_context* context_ = nullptr;
    ibv_pd* pd_ = nullptr;
    std::uint8_t port_ = 1;
    ibv_port_attr port_attr_{};
    bool ethernet_ = false;
    int gid_index_ = 0;
    ibv_gid gid_{};
    std::vector<ibv_mr*> mrs_;
    std::vector<queue> queues_;
};
#endif  // PGAS_HAVE_RDMA_CORE

}  // namespace detail
PGAS_NAMESPACE_END
