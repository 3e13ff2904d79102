// First-fit allocator of symmetric heap offsets: alignment, reuse after free, coalescing of neighbours.
#pragma once

#include <pgas/core/config.hpp>

#include <cstdint>
#include <iterator>
#include <map>
#include <optional>

PGAS_NAMESPACE_BEGIN
namespace detail {

// Hands out byte ranges of [begin, end). Every PE runs its own replica on the
// same sequence of collective alloc/free calls, so all replicas return the
// same offsets: that is what makes an offset symmetric. Host-only, not thread
// safe (world serialises calls).
class heap_allocator {
public:
    heap_allocator(std::uint64_t begin, std::uint64_t end) : begin_(begin), end_(end) {
        if (end > begin) free_[begin] = end - begin;
    }

    // Offset of a block of `bytes` aligned to `alignment` (a power of two), or
    // nothing when no free block is large enough.
    std::optional<std::uint64_t> allocate(std::uint64_t bytes, std::uint64_t alignment) {
        bytes = round_up(bytes == 0 ? 1 : bytes, min_granule);
        for (auto it = free_.begin(); it != free_.end(); ++it) {
            const std::uint64_t start = it->first, size = it->second;
            const std::uint64_t aligned = round_up(start, alignment);
            if (aligned - start > size || size - (aligned - start) < bytes) continue;
            free_.erase(it);
            if (aligned > start) free_[start] = aligned - start;
            if (aligned + bytes < start + size) free_[aligned + bytes] = start + size - (aligned + bytes);
            used_[aligned] = bytes;
            return aligned;
        }
        return std::nullopt;
    }

    // Returns a block; false when offset is not the start of a live block.
    bool deallocate(std::uint64_t offset) {
        auto used = used_.find(offset);
        if (used == used_.end()) return false;
        std::uint64_t start = offset, size = used->second;
        used_.erase(used);
        auto next = free_.lower_bound(start);
        if (next != free_.end() && next->first == start + size) {
            size += next->second;
            next = free_.erase(next);
        }
        if (next != free_.begin()) {
            auto prev = std::prev(next);
            if (prev->first + prev->second == start) {
                start = prev->first;
                size += prev->second;
                free_.erase(prev);
            }
        }
        free_[start] = size;
        return true;
    }

    // Size of the live block that starts at offset, or 0.
    std::uint64_t block_size(std::uint64_t offset) const {
        auto it = used_.find(offset);
        return it == used_.end() ? 0 : it->second;
    }
    // Whether [offset, offset+bytes) lies inside one live block.
    bool contains(std::uint64_t offset, std::uint64_t bytes) const {
        auto it = used_.upper_bound(offset);
        if (it == used_.begin()) return false;
        --it;
        return offset - it->first <= it->second && bytes <= it->second - (offset - it->first);
    }

    std::uint64_t free_bytes() const {
        std::uint64_t total = 0;
        for (auto& [start, size] : free_) total += size;
        return total;
    }
    std::uint64_t largest_free_block() const {
        std::uint64_t largest = 0;
        for (auto& [start, size] : free_) largest = size > largest ? size : largest;
        return largest;
    }
    std::uint64_t capacity() const { return end_ - begin_; }
    std::size_t free_block_count() const { return free_.size(); }
    std::size_t live_block_count() const { return used_.size(); }

    // Granule and default alignment: 256 bytes keeps every allocation aligned
    // for 16-byte vector copies and off other allocations' cache lines.
    static constexpr std::uint64_t min_granule = 256;

private:
    static constexpr std::uint64_t round_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

    std::uint64_t begin_, end_;
    std::map<std::uint64_t, std::uint64_t> free_;  // start -> size
    std::map<std::uint64_t, std::uint64_t> used_;  // start -> size
};

}  // namespace detail
PGAS_NAMESPACE_END
