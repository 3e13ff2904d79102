// window<T>: a typed name for user-allocated buffers registered on every PE (world::register_window).
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/core/symmetric_ptr.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

PGAS_NAMESPACE_BEGIN

namespace detail {
// One row of a window's table, one row per world PE. The table lives in the symmetric heap (each PE's copy written
// by its own process), so a kernel finds PE pe's buffer with one load from its own heap. `address` is the buffer as
// the reading PE's threads may load and store it (its own, a same-process peer's, a CUDA IPC mapping) or null where
// that PE's buffer is not mapped here; `bytes` is the buffer's size (the same on every PE). `remote` and `rkey` are
// PE pe's buffer as its NIC registered it (the address a remote-address segment carries, and the remote key), for
// transports whose device threads address peers through a NIC (ibgda: its domain, a window_observer, fills them);
// both 0 where no NIC registered it. The same for every reader: a key names a registration on the target's NIC.
struct window_row {
    std::byte* address;
    std::uint64_t bytes;
    std::uint64_t remote;
    std::uint32_t rkey;
    std::uint32_t reserved;
};
static_assert(sizeof(window_row) == 32);
static_assert(std::is_trivially_copyable_v<window_row>);
}  // namespace detail

/// A typed name for buffers that the user allocated on every PE and registered with world::register_window (as
/// NVSHMEM's nvshmemx_buffer_register and NCCL's ncclCommWindowRegister): it names element `offset()` of PE pe's
/// buffer for every pe, so the device ops of device/window.hpp (put, get, put_nbi, get_nbi, p, g, put_signal, the
/// atomics) take it where they take a symmetric_ptr. Unlike a symmetric_ptr the buffers are not in the symmetric
/// heap and may sit at different addresses on each PE; the handle is the same value on every PE (its table is a
/// heap offset), so it may be stored in symmetric memory or sent to a peer.
///
/// Made by world::register_window, dead after world::release_window (a copy kept past it names freed memory).
/// Trivially copyable; usable on host and device; default-constructed it is null.
template <class T>
class window {
public:
    /// T.
    using element_type = T;

    /// The null window (false in a boolean context).
    constexpr window() = default;
    /// From its parts (what world::register_window does); programs do not need it.
    PGAS_HD constexpr window(detail::offset_tag, std::uint64_t table_offset, std::uint64_t count, std::uint64_t first,
                             std::uint32_t id)
        : table_(table_offset), count_(count), first_(first), id_(id) {}

    /// window<T> -> window<const T>, as for raw pointers.
    template <class U>
    requires(std::is_convertible_v<U*, T*>) PGAS_HD constexpr window(window<U> other)
        : table_(other.table_offset()), count_(other.size()), first_(other.offset()), id_(other.id()) {}

    /// Whether it names a window (is not null).
    PGAS_HD constexpr explicit operator bool() const { return table_ != detail::null_offset; }
    /// Elements of every PE's buffer (the count passed to world::register_window).
    PGAS_HD constexpr std::uint64_t size() const { return count_; }
    /// The element this handle names, counted from the start of the buffer.
    PGAS_HD constexpr std::uint64_t offset() const { return first_; }
    /// Elements from offset() to the end of the buffer.
    PGAS_HD constexpr std::uint64_t remaining() const { return first_ <= count_ ? count_ - first_ : 0; }
    /// Heap offset of the window's per-PE table (internal; it identifies the window).
    PGAS_HD constexpr std::uint64_t table_offset() const { return table_; }
    /// The world's serial number of the window (internal; release_window tells a live window from a released one).
    PGAS_HD constexpr std::uint32_t id() const { return id_; }

    /// The element n places further, as for raw pointers (no bounds check here; the ops check under PGAS_CHECKS).
    PGAS_HD constexpr window operator+(std::ptrdiff_t n) const {
        return window(detail::offset_tag{}, table_, count_, first_ + std::uint64_t(n), id_);
    }
    /// The element n places before.
    PGAS_HD constexpr window operator-(std::ptrdiff_t n) const { return *this + (-n); }
    /// Advances by n elements.
    PGAS_HD constexpr window& operator+=(std::ptrdiff_t n) { return *this = *this + n; }

    friend constexpr bool operator==(window, window) = default;

private:
    std::uint64_t table_ = detail::null_offset;
    std::uint64_t count_ = 0;
    std::uint64_t first_ = 0;
    std::uint32_t id_ = 0;
};

static_assert(std::is_trivially_copyable_v<window<int>>);

PGAS_NAMESPACE_END
