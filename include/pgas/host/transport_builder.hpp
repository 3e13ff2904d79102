// pgas::transport_builder<T>: the host-side contract of a transport: what it needs from the world, the device
// context it hands out, and how it is torn down.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/device/context.hpp>
#include <pgas/fwd.hpp>
#include <pgas/transport/concepts.hpp>

#include <concepts>

PGAS_NAMESPACE_BEGIN

// Specialised once per transport, in that transport's folder under host/
// (host/<name>/): `type` is the host object that builds transport T for a
// world and hands out its device contexts. Every transport has one, the ones
// the world builds alone (nvlink, host: world::context<T> goes through it)
// and the ones with their own state and options (ibgda_domain,
// libfabric_domain, route's). A transport added under transport/<name>/ adds
// its builder under host/<name>/ and touches nothing else.
template <class T>
struct transport_builder;

/// The host object that builds transport T (transport_builder<T>::type).
template <class T>
using transport_builder_t = typename transport_builder<T>::type;

// The clauses of the contract, one concept each (the diagnostic below names the one that fails).
namespace builder_clause {
template <class T>
concept declared = requires {
    typename transport_builder<T>::type;
};
// What the transport needs besides the world: B::options, default-constructible (the defaults work).
template <class B>
concept options = requires {
    typename B::options;
}
&&std::default_initializable<typename B::options>;
// Built from the world (collectively where the transport connects PEs), after its heap exists.
template <class B>
concept from_world = options<B> && std::constructible_from<B, world&, const typename B::options&>;
// Hands out the trivially copyable context of local PE `local`, by value, as often as asked.
template <class B, class T>
concept hands_out_context = requires(const B& b, int local) {
    { b.context(local) } -> std::same_as<device::context<T>>;
};
// Torn down by its destructor (collective where its construction was), before the world's.
template <class B>
concept teardown = std::destructible<B>;
// Built from the world alone, on the fly, holding nothing (world::context<T> uses these).
template <class B>
concept world_built = std::constructible_from<B, const world&>;
}  // namespace builder_clause

// B builds transport T: the whole contract.
template <class B, class T>
concept host_transport_builder = transport<T> && builder_clause::from_world<B> &&
    builder_clause::hands_out_context<B, T> && builder_clause::teardown<B>;

// T has a visible builder that satisfies the contract.
template <class T>
concept host_buildable_transport = builder_clause::declared<T> && host_transport_builder<transport_builder_t<T>, T>;

namespace detail {
// Each static_assert names one clause; the instantiation context names the transport. Every builder's
// header ends with static_assert(detail::diagnose_transport_builder<T>()).
template <class T>
constexpr bool diagnose_transport_builder() {
    diagnose_transport<T>();
    static_assert(builder_clause::declared<T>,
                  "pgas: this transport has no visible transport_builder<T> with a `type`: include its host side "
                  "(<pgas/host/<name>/...>; pgas/pgas.hpp includes nvlink's and host's)");
    if constexpr (builder_clause::declared<T>) {
        using B = transport_builder_t<T>;
        static_assert(builder_clause::options<B>,
                      "pgas: the transport's builder has no default-constructible `options` type (what it needs "
                      "besides the world; an empty struct when nothing)");
        if constexpr (builder_clause::options<B>)
            static_assert(builder_clause::from_world<B>,
                          "pgas: the transport's builder has no constructor (world&, const options&)");
        static_assert(builder_clause::hands_out_context<B, T>,
                      "pgas: the transport's builder has no `device::context<T> context(int local) const`");
        static_assert(builder_clause::teardown<B>,
                      "pgas: the transport's builder has no public non-throwing destructor (its teardown)");
    }
    return true;
}
}  // namespace detail

PGAS_NAMESPACE_END
