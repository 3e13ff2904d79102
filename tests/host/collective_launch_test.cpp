// collective_launch's checks on a machine without a GPU (the launch itself runs in the GPU suite).
#include "support.hpp"

#include <string>

TEST_CASE("collective_launch: a grid over the co-resident maximum is refused naming the call, PE, grid and maximum") {
    const std::string text = test::error_of(
        [] { pgas::detail::check_co_resident("collective_launch", 3, dim3(33, 2, 1), 64); },
        pgas::errc::invalid_argument);
    CHECK_MESSAGE(test::contains(text, "collective_launch on PE 3"), text);
    CHECK_MESSAGE(test::contains(text, "grid 33x2x1 = 66 blocks, but at most 64 blocks"), text);
    CHECK_NOTHROW(pgas::detail::check_co_resident("collective_launch", 3, dim3(32, 2, 1), 64));
    auto w = pgas::world::init_local(2, test::options());
    CHECK(pgas::detail::launch_pe(5, w.context<pgas::host>(1), w.context<pgas::host>(0)) == 1);
    CHECK(pgas::detail::launch_pe(5, 6.0) == -1);
}

namespace {
void no_kernel(test::ctx, int) {}
}  // namespace

TEST_CASE("collective_launch without a usable GPU throws errc::cuda naming the call and the PE") {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) return;  // the GPU suite covers this machine
    auto w = pgas::world::init_local(1, test::options());
    const std::string text = test::error_of(
        [&] { pgas::collective_launch(no_kernel, dim3(1), dim3(32), 0, nullptr, w.context<pgas::host>(0), 1); },
        pgas::errc::cuda);
    CHECK_MESSAGE(test::contains(text, "collective_launch on PE 0"), text);
}
