// window_observer: how a transport's domain learns of the windows world::register_window makes, to reach them
// through its own fabric.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/core/window.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

PGAS_NAMESPACE_BEGIN

/// A window as world::register_window made it, as a window_observer learns of it.
struct registered_window {
    /// The window's table offset in the heap (window<T>::table_offset): its name in commands.
    std::uint64_t table = 0;
    /// The window's id (window<T>::id).
    std::uint32_t id = 0;
    /// Bytes of every PE's buffer.
    std::uint64_t bytes = 0;
    /// The local PEs' own buffers, buffers[i] local PE i's.
    std::vector<std::byte*> buffers;
};

/// What a transport's domain implements to reach registered windows through its own fabric (libfabric_domain
/// registers each PE's buffer with the provider and exchanges the keys; ibgda_domain registers it with each PE's NIC
/// and writes the keys into the window's table). The world is the one place windows are
/// registered: a domain attaches itself (world::attach_window_observer) and from then on world::register_window and
/// world::release_window call it on every participant, inside the same collective call, so one window<T> handle
/// serves every transport of the world.
class window_observer {
public:
    /// Collective, inside register_window once the world's own checks passed (and inside attach_window_observer
    /// for each window live then): make window `w` reachable. `rows` are the window's table rows by world PE, which
    /// the world writes into every local PE's heap once the observers returned: an observer whose device ops
    /// address peers through a NIC fills each PE's `remote` and `rkey` (its registration's address and remote
    /// key) and leaves `address` and `bytes` alone; one whose host side resolves windows itself (the libfabric
    /// proxy) leaves them. A failure must throw on every participant (exchange the verdicts first); the world then
    /// registers nothing.
    virtual void window_registered(const registered_window& w, std::span<detail::window_row> rows) = 0;
    /// Collective, inside release_window before the world frees the table: stop reaching window `table`.
    virtual void window_releasing(std::uint64_t table) = 0;

protected:
    /// Not deleted through this interface.
    ~window_observer() = default;
};

PGAS_NAMESPACE_END
