// expect: world::context<T> hands out the contexts of the transports the world builds alone
// A transport with its own builder state (as libfabric_domain, ibgda_domain) is not handed out by the world.
#include "../host/mock_transport.hpp"

struct stateful_builder {
    struct options {};
    stateful_builder(pgas::world&, const options&) {}
    pgas::device::context<test::identity_only_transport> context(int) const { return {}; }
};

template <>
struct pgas::transport_builder<test::identity_only_transport> {
    using type = stateful_builder;
};

void misuse(const pgas::world& w) { (void)w.context<test::identity_only_transport>(0); }
