// symmetric_ptr<T>: a typed name for the same object on every PE (a heap offset, not an address).
#pragma once

#include <pgas/core/config.hpp>

#include <compare>
#include <cstddef>
#include <cstdint>
#include <type_traits>

PGAS_NAMESPACE_BEGIN

namespace detail {
struct offset_tag {};
inline constexpr std::uint64_t null_offset = ~std::uint64_t{0};
}  // namespace detail

/// A typed name for the same object on every PE. The value is the byte
/// offset of the object inside the symmetric heap, so it is identical on all
/// PEs and may be stored in symmetric memory or sent to a peer. It cannot be
/// dereferenced: turn it into a raw pointer with ctx.local(p) or
/// ctx.peer(p, pe) (device::context), or world::local / world::device_address
/// on the host. Made by world::alloc (and world::symmetric). Trivially
/// copyable; usable on host and device. Default-constructed it is null.
template <class T>
class symmetric_ptr {
public:
    /// T.
    using element_type = T;

    /// The null symmetric_ptr (false in a boolean context).
    constexpr symmetric_ptr() = default;
    /// From a raw heap byte offset (what world::alloc does); programs rarely need it.
    PGAS_HD constexpr symmetric_ptr(detail::offset_tag, std::uint64_t byte_offset) : offset_(byte_offset) {}

    /// symmetric_ptr<T> -> symmetric_ptr<const T> (and -> void), as for raw pointers.
    template <class U>
    requires(std::is_convertible_v<U*, T*>) PGAS_HD constexpr symmetric_ptr(symmetric_ptr<U> other)
        : offset_(other.offset()) {}

    /// The object's byte offset in every PE's symmetric heap.
    PGAS_HD constexpr std::uint64_t offset() const { return offset_; }
    /// Whether it names an object (is not null).
    PGAS_HD constexpr explicit operator bool() const { return offset_ != detail::null_offset; }

    /// The element n places further, as for raw pointers (not for symmetric_ptr<void>; no bounds check).
    PGAS_HD constexpr symmetric_ptr operator+(std::ptrdiff_t n) const {
        static_assert(!std::is_void_v<T>, "pgas: arithmetic on symmetric_ptr<void>; cast it first");
        return symmetric_ptr(detail::offset_tag{}, offset_ + std::uint64_t(n) * sizeof(T));
    }
    /// The element n places before.
    PGAS_HD constexpr symmetric_ptr operator-(std::ptrdiff_t n) const { return *this + (-n); }
    /// Elements between two pointers into the same allocation.
    PGAS_HD constexpr std::ptrdiff_t operator-(symmetric_ptr other) const {
        return std::ptrdiff_t(offset_ - other.offset_) / std::ptrdiff_t(sizeof(T));
    }
    /// Advances by n elements.
    PGAS_HD constexpr symmetric_ptr& operator+=(std::ptrdiff_t n) { return *this = *this + n; }
    /// Moves back by n elements.
    PGAS_HD constexpr symmetric_ptr& operator-=(std::ptrdiff_t n) { return *this = *this - n; }
    /// Advances by one element.
    PGAS_HD constexpr symmetric_ptr& operator++() { return *this += 1; }
    /// Moves back by one element.
    PGAS_HD constexpr symmetric_ptr& operator--() { return *this -= 1; }

    friend constexpr bool operator==(symmetric_ptr, symmetric_ptr) = default;
    friend PGAS_HD constexpr auto operator<=>(symmetric_ptr a, symmetric_ptr b) { return a.offset_ <=> b.offset_; }

private:
    std::uint64_t offset_ = detail::null_offset;
};

/// Reinterprets the same symmetric bytes as another type (like reinterpret_cast).
template <class To, class From>
PGAS_HD constexpr symmetric_ptr<To> symmetric_cast(symmetric_ptr<From> p) {
    return symmetric_ptr<To>(detail::offset_tag{}, p.offset());
}

static_assert(std::is_trivially_copyable_v<symmetric_ptr<int>>);
static_assert(sizeof(symmetric_ptr<double>) == 8);

PGAS_NAMESPACE_END
