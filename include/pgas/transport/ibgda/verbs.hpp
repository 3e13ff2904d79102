// rdma-core on the host: finding an mlx5 device for IBGDA, or saying clearly why there is none.
#pragma once

#include <pgas/core/error.hpp>

#include <cerrno>
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

}  // namespace detail
PGAS_NAMESPACE_END
