// expect: the transport's builder has no `device::context<T> context\(int local\) const`
// A transport whose host-side builder has options, a constructor from the world and a destructor but no context():
// the error names the missing member (host/transport_builder.hpp), not only the concept.
#include "../host/mock_transport.hpp"

struct builder_without_context {
    struct options {};
    builder_without_context(pgas::world&, const options&) {}
};

template <>
struct pgas::transport_builder<test::identity_only_transport> {
    using type = builder_without_context;
};

static_assert(pgas::detail::diagnose_transport_builder<test::identity_only_transport>());
