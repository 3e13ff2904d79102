// The fabric objects of one libfabric PE (fabric, domain, completion queue, address vector, RDM endpoint), memory
// registration with them, the registered heap and the address card the PE publishes.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/host/libfabric/provider.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include <cuda_runtime_api.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

PGAS_NAMESPACE_BEGIN
namespace ofi {

// What one PE publishes to the others through the bootstrap.
struct address_card {
    char name[240];
    std::uint64_t name_len;
    std::uint64_t heap_base;  // virtual address (used when the provider wants FI_MR_VIRT_ADDR)
    std::uint64_t heap_key;
    std::int32_t pe;
    std::int32_t pad;
};

// How a fabric_backend sets itself up (fabric_backend::setup; libfabric_domain fills it from libfabric_options).
struct fabric_setup {
    int pe = 0;
    int n_pes = 0;
    std::byte* heap_base = nullptr;
    std::uint64_t heap_bytes = 0;
    bool heap_is_gpu = false;
    bool gpu_producers = false;
    int cuda_device = -1;        // the PE's GPU: made current on the proxy thread before staging copies
    bool force_staging = false;  // stage host buffers too (libfabric_options::stage_local_buffers)
    std::uint32_t max_in_flight = 2048;
    std::size_t bounce_chunk_bytes = std::size_t{256} << 10;
    std::uint32_t bounce_chunks = 16;
    bool flush_delivery = false;      // put delivery "flush" (needs an ordered endpoint)
    std::uint32_t flush_every = 256;  // unconfirmed injected puts to one PE before a flush is posted anyway
    std::size_t coalesce_bytes = 4096;
    // Work outstanding and nothing completing or posted this long: the
    // proxy says once on stderr which operation is stuck and where (0: never).
    std::int64_t stall_report_ns = std::int64_t{10} * 1000000000;
};

// The bottom layer of fabric_backend: opens the fabric objects, registers memory with the domain and inserts the
// peers' addresses. It closes nothing by itself: fabric_backend::close closes every layer's objects in the one
// order the providers accept (the endpoint first, the fabric last).
class fabric_endpoint {
public:
    const address_card& card() const { return card_; }

    std::string provider() const { return info_->fabric_attr->prov_name; }
    std::string domain_name() const { return info_->domain_attr->name ? info_->domain_attr->name : ""; }
    std::uint64_t mr_mode() const { return mr_mode_; }
    std::size_t inject_size() const { return inject_size_; }
    const char* put_delivery() const { return s_.flush_delivery ? "flush" : "complete"; }
    // The heap is GPU memory registered with FI_HMEM (FI_HMEM_CUDA): the provider reaches it directly.
    bool heap_hmem() const { return s_.heap_is_gpu; }

    // Writes and atomics to one PE are processed in the order posted
    // (FI_ORDER_RAW|FI_ORDER_WAW granted, as shm does): the proxy may post put_signal's
    // signal right behind its data instead of after the data's completion.
    bool ordered() const { return ordered_; }

    // --- raw access for benchmarks comparing the proxy with the provider ------

    fid_ep* endpoint() const { return ep_; }
    fid_cq* completion_queue() const { return cq_; }
    void* heap_descriptor() const { return heap_desc_; }

protected:
    explicit fabric_endpoint(const fabric_setup& s) : s_(s) {}
    ~fabric_endpoint() = default;

    static constexpr std::size_t max_gather = std::size_t{64} << 10;

    void open_endpoint(const fi_info* chosen) {
        info_.reset(fi_dupinfo(chosen));
        mr_mode_ = info_->domain_attr->mr_mode;
        ordered_ = has_order(info_.get(), full_order);
        inject_size_ = std::min<std::size_t>(info_->tx_attr->inject_size, max_gather);
        if (s_.flush_delivery && (!has_rma_order(info_.get()) || inject_size_ < 8))
            fail(errc::invalid_argument, s_.pe, "libfabric_domain", "put delivery \"flush\" needs an ordered endpoint");
        check(fi_fabric(info_->fabric_attr, &fabric_, nullptr), s_.pe, "fi_fabric", "opening the fabric");
        check(fi_domain(fabric_, info_.get(), &domain_, nullptr), s_.pe, "fi_domain", "opening the domain");
        fi_cq_attr cq_attr{};
        cq_attr.format = FI_CQ_FORMAT_CONTEXT;
        cq_attr.size = s_.max_in_flight * 2;
        check(fi_cq_open(domain_, &cq_attr, &cq_, nullptr), s_.pe, "fi_cq_open", "opening the completion queue");
        fi_av_attr av_attr{};
        av_attr.type = FI_AV_TABLE;
        av_attr.count = std::size_t(s_.n_pes);
        check(fi_av_open(domain_, &av_attr, &av_, nullptr), s_.pe, "fi_av_open", "opening the address vector");
        check(fi_endpoint(domain_, info_.get(), &ep_, nullptr), s_.pe, "fi_endpoint", "opening the RDM endpoint");
        check(fi_ep_bind(ep_, &av_->fid, 0), s_.pe, "fi_ep_bind", "binding the address vector");
        check(fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV), s_.pe, "fi_ep_bind", "binding the completion queue");
        check(fi_enable(ep_), s_.pe, "fi_enable", "enabling the endpoint");

        heap_mr_ = register_memory(s_.heap_base, s_.heap_bytes, FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE,
                                   1, s_.heap_is_gpu, "the symmetric heap");
        heap_desc_ = fi_mr_desc(heap_mr_);
    }

    // The card this PE publishes: the endpoint's address and the heap's address and key.
    void fill_card() {
        std::memset(&card_, 0, sizeof(card_));
        std::size_t len = sizeof(card_.name);
        check(fi_getname(&ep_->fid, card_.name, &len), s_.pe, "fi_getname", "reading the endpoint address");
        card_.name_len = len;
        card_.heap_base = reinterpret_cast<std::uint64_t>(s_.heap_base);
        card_.heap_key = fi_mr_key(heap_mr_);
        card_.pe = s_.pe;
    }

    // Inserts PE pe's address into the address vector; throws when the provider cannot reach it.
    fi_addr_t insert_address(std::size_t pe, const address_card& card) {
        fi_addr_t addr = FI_ADDR_NOTAVAIL;
        const int rc = fi_av_insert(av_, card.name, 1, &addr, 0, nullptr);
        if (rc != 1)
            fail(errc::transport_unavailable, s_.pe, "libfabric_domain",
                 "fi_av_insert of PE " + std::to_string(pe) + "'s address failed (" + describe("fi_av_insert", rc) +
                     "): peer unreachable with provider " + provider());
        return addr;
    }

    fid_mr* register_memory(void* base, std::size_t bytes, std::uint64_t access, std::uint64_t key, bool gpu,
                            const char* what, const char* call = "libfabric_domain") {
        iovec iov{base, bytes};
        fi_mr_attr attr{};
        attr.mr_iov = &iov;
        attr.iov_count = 1;
        attr.access = access;
        attr.requested_key = key;
        attr.iface = FI_HMEM_SYSTEM;
        if (gpu) {
            cudaPointerAttributes pointer{};
            if (cudaPointerGetAttributes(&pointer, base) != cudaSuccess)
                fail(errc::cuda, s_.pe, call, std::string("cannot query the GPU of ") + what);
            attr.iface = FI_HMEM_CUDA;
            attr.device.cuda = pointer.device;
        }
        fid_mr* mr = nullptr;
        const int rc = fi_mr_regattr(domain_, &attr, 0, &mr);
        if (rc != 0) {
            std::string detail = std::string("registering ") + what + " (" + std::to_string(bytes) + " bytes";
            detail += gpu ? ", CUDA memory" : "";
            detail += ") with provider " + provider() + ": " + describe("fi_mr_regattr", rc);
            if (gpu)
                detail +=
                    "; this provider cannot register GPU memory (no FI_HMEM for CUDA): the remote side of "
                    "the proxy needs an FI_HMEM provider for a GPU heap";
            fail(errc::transport_unavailable, s_.pe, call, detail);
        }
        if (mr_mode_ & FI_MR_ENDPOINT) {
            check(fi_mr_bind(mr, &ep_->fid, 0), s_.pe, "fi_mr_bind", "binding a memory region to the endpoint");
            check(fi_mr_enable(mr), s_.pe, "fi_mr_enable", "enabling a memory region");
        }
        return mr;
    }

    // The endpoint closes before any memory region (fabric_backend::close).
    void close_endpoint() {
        if (ep_) fi_close(&ep_->fid);
        ep_ = nullptr;
    }

    // The heap's registration, then the address vector, completion queue, domain and fabric.
    void close_fabric() {
        if (heap_mr_) fi_close(&heap_mr_->fid);
        if (av_) fi_close(&av_->fid);
        if (cq_) fi_close(&cq_->fid);
        if (domain_) fi_close(&domain_->fid);
        if (fabric_) fi_close(&fabric_->fid);
        heap_mr_ = nullptr, av_ = nullptr, cq_ = nullptr, domain_ = nullptr, fabric_ = nullptr;
    }

    fabric_setup s_;
    info_ptr info_;
    std::uint64_t mr_mode_ = 0;
    std::size_t inject_size_ = 0;
    bool ordered_ = false;
    fid_fabric* fabric_ = nullptr;
    fid_domain* domain_ = nullptr;
    fid_cq* cq_ = nullptr;
    fid_av* av_ = nullptr;
    fid_ep* ep_ = nullptr;
    fid_mr* heap_mr_ = nullptr;
    void* heap_desc_ = nullptr;
    address_card card_{};
};

}  // namespace ofi
PGAS_NAMESPACE_END
