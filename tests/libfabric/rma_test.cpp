// The RMA shared cases through the proxy on shm and tcp;ofi_rxm, directly and through bounce buffers, and what a
// libfabric context is.
#include "support.hpp"

#include "../common/rma_cases.hpp"

#include <type_traits>

PGAS_TEST_RMA_CASES(test::loopback, test::loopback_staged);

TEST_CASE("the context is a trivially copyable value with the world's PE numbering - peer() is null") {
    static_assert(std::is_trivially_copyable_v<test::ctx>);
    test::run("shm", 2, [&](pgas::world& w, pgas::libfabric_domain& fabric) {
        auto x = w.alloc<int>(4);
        auto ctx = fabric.context();
        CHECK(ctx.my_pe() == w.my_pe());
        CHECK(ctx.n_pes() == 2);
        CHECK(ctx.peer(x, 1 - w.my_pe()) == nullptr);
        CHECK(ctx.local(x) == w.local(x));
        CHECK(fabric.provider() == "shm");
    });
}
