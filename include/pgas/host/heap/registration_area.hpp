// Where buffers registered as symmetric memory sit in each PE's registration area of a GPU heap (after the heap in
// every PE's part of the address range): first fit, freed on unregistration. Bookkeeping only, no CUDA.
#pragma once

#include <pgas/core/config.hpp>

#include <cstdint>
#include <iterator>
#include <map>
#include <optional>

PGAS_NAMESPACE_BEGIN
namespace detail {

class registration_area {
public:
    registration_area() = default;
    /// The area [begin, end) of each PE's part (offsets from the part's start).
    registration_area(std::uint64_t begin, std::uint64_t end) : begin_(begin), end_(end) {}

    /// The lowest offset with `slot` free bytes after it (first fit), or none when no gap holds them.
    std::optional<std::uint64_t> place(std::uint64_t slot) const {
        std::uint64_t at = begin_;
        for (const auto& [offset, bytes] : live_) {
            if (offset - at >= slot) break;
            at = offset + bytes;
        }
        if (slot == 0 || slot > end_ - at) return std::nullopt;
        return at;
    }
    /// Marks [offset, +slot) taken (an offset place() returned).
    void take(std::uint64_t offset, std::uint64_t slot) { live_[offset] = slot; }
    /// Frees the slot taken at `offset` (nothing when none was).
    void release(std::uint64_t offset) { live_.erase(offset); }

    /// Whether a slot starts at `offset`.
    bool starts_at(std::uint64_t offset) const { return live_.count(offset) != 0; }
    /// Whether [offset, +bytes) lies in one taken slot.
    bool holds(std::uint64_t offset, std::uint64_t bytes) const {
        const auto next = live_.upper_bound(offset);
        if (next == live_.begin()) return false;
        const auto& [start, slot] = *std::prev(next);
        return offset - start <= slot && bytes <= slot - (offset - start);
    }
    /// The end of the highest taken slot, or none.
    std::optional<std::uint64_t> end_of_last() const {
        if (live_.empty()) return std::nullopt;
        return live_.rbegin()->first + live_.rbegin()->second;
    }
    /// The area's bytes.
    std::uint64_t size() const { return end_ - begin_; }

private:
    std::uint64_t begin_ = 0;
    std::uint64_t end_ = 0;
    std::map<std::uint64_t, std::uint64_t> live_;  // offset -> slot bytes
};

}  // namespace detail
PGAS_NAMESPACE_END
