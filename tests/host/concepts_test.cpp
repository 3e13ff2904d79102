// Transport concepts: positive and negative cases (the negative compile tests live in tests/compile_fail).
#include "mock_transport.hpp"

#include <doctest/doctest.h>

static_assert(pgas::transport<pgas::host>);
static_assert(pgas::rma_transport<pgas::host>);
static_assert(pgas::atomic_transport<pgas::host>);
static_assert(pgas::signal_transport<pgas::host>);
static_assert(pgas::load_store_transport<pgas::host>);
static_assert(std::is_trivially_copyable_v<pgas::device::context<pgas::host>>);

static_assert(pgas::transport<test::identity_only_transport>);
static_assert(!pgas::rma_transport<test::identity_only_transport>);
static_assert(!pgas::atomic_transport<test::identity_only_transport>);
static_assert(!pgas::signal_transport<test::identity_only_transport>);
static_assert(!pgas::load_store_transport<test::identity_only_transport>);
static_assert(!pgas::rma_transport<test::claims_rma_transport>, "an opt-in without the members is not enough");
static_assert(!pgas::transport<int>);

static_assert(pgas::group<pgas::thread> && pgas::group<pgas::warp> && pgas::group<pgas::block> &&
              pgas::group<pgas::tile<8>>);
// The group-templated members are checked for every kind of group, one named clause each.
static_assert(pgas::transport_clause::rma<pgas::host, pgas::thread> && pgas::transport_clause::rma<pgas::host, pgas::warp> &&
              pgas::transport_clause::rma<pgas::host, pgas::block> && pgas::transport_clause::rma<pgas::host, pgas::tile<8>>);
static_assert(pgas::transport_clause::put_signal<pgas::host, pgas::tile<4>>);
static_assert(!pgas::transport_clause::put<test::claims_rma_transport, pgas::thread>);

TEST_CASE("a context over a transport without load/store gives no peer pointers") {
    pgas::device::context<test::identity_only_transport> ctx{};
    pgas::symmetric_ptr<int> p(pgas::detail::offset_tag{}, 4096);
    CHECK(ctx.peer(p, 0) == nullptr);
    CHECK(ctx.my_pe() == 0);
}
