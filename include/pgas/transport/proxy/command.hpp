// The proxy ring's vocabulary: fixed-size commands, the control block the proxy writes back, value kinds.
#pragma once

#include <pgas/core/config.hpp>
#include <pgas/core/ordering.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

PGAS_NAMESPACE_BEGIN
namespace proxy {

// What a command asks the proxy to do.
enum class op_code : std::uint8_t {
    put,         // bytes from local (or the inline payload) to remote on pe
    get,         // bytes from remote on pe to local (or, small, to the reply payload)
    atomic,      // amo on a 4/8-byte word; fetching ones reply with the old value
    signal,      // signal_op on a 64-bit word, after every earlier command has completed
    put_signal,  // put, then (once the data is delivered) the signal update
    fence,       // later commands start only after every earlier one completed
};

PGAS_HD constexpr const char* to_string(op_code op) {
    switch (op) {
        case op_code::put:
            return "put";
        case op_code::get:
            return "get";
        case op_code::atomic:
            return "atomic";
        case op_code::signal:
            return "signal";
        case op_code::put_signal:
            return "put_signal";
        case op_code::fence:
            return "fence";
    }
    return "?";
}

// The element type of an atomic (the fabric needs it for add on floats).
enum class value_kind : std::uint8_t { u32, u64, i32, i64, f32, f64 };

template <class V>
PGAS_HD constexpr value_kind kind_of() {
    if constexpr (std::is_same_v<V, float>)
        return value_kind::f32;
    else if constexpr (std::is_same_v<V, double>)
        return value_kind::f64;
    else if constexpr (sizeof(V) == 4)
        return std::is_signed_v<V> ? value_kind::i32 : value_kind::u32;
    else
        return std::is_signed_v<V> ? value_kind::i64 : value_kind::u64;
}
PGAS_HD constexpr std::size_t width_of(value_kind k) {
    return (k == value_kind::u32 || k == value_kind::i32 || k == value_kind::f32) ? 4 : 8;
}

// Command flags.
inline constexpr std::uint8_t flag_inline = 1;         // put data / get reply travel in the payload
inline constexpr std::uint8_t flag_reply = 2;          // the result goes to the producer's reply entry
inline constexpr std::uint8_t flag_device_memory = 4;  // local is GPU memory (staged by the backend)
inline constexpr std::uint8_t flag_window = 8;         // `remote` is a byte offset into registered window `window`

inline constexpr std::size_t inline_bytes = 48;

// The `window` argument of proxy_ops' internals for a heap operation (no flag_window).
inline constexpr std::uint64_t no_window = ~std::uint64_t{0};

// One ring slot (128 bytes: 80 of header, 48 of payload). The producer fills
// every field from `op` on, then publishes the slot by storing seq = ticket + 1
// (release). The proxy no longer reads a slot once the command completed, so
// `completed` is also the ring's credit: ticket t may be written once
// t < completed + capacity.
struct alignas(128) command {
    std::uint64_t seq;
    std::uint64_t window;  // flag_window: the window's table offset (window<T>::table_offset), its name
    op_code op;
    amo amo_op;
    signal_op sig_op;
    value_kind kind;
    std::uint8_t flags;
    std::uint8_t pad_[3];
    std::int32_t pe;
    std::uint32_t reply_entry;  // flag_reply: the producer's entry in the reply pool
    std::uint64_t remote;       // heap offset at pe (flag_window: byte offset into the window's buffer at pe)
    std::uint64_t bytes;
    std::uint64_t local;    // address in the producer's space (put source / get destination)
    std::uint64_t operand;  // atomic operand / signal value
    std::uint64_t compare;  // compare_swap's expected value / put_signal's signal offset
    unsigned char payload[inline_bytes];
};
static_assert(sizeof(command) == 128);
static_assert(std::is_trivially_copyable_v<command>);

// Where a fetching atomic's old value or a small get's bytes come back. A
// producer claims an entry before it publishes such a command and frees it
// once it has read the reply, so a waiting producer holds no ring slot: the
// ring's credits depend on the proxy alone, never on whether some other
// producer (a lane of a diverged warp, say) gets to run and read its reply.
// The proxy writes the payload, then tag = token + 1 (release; ring_view::token: the ticket, with the channel of
// its ring in the high bits, so that rings sharing the pool never mistake each other's replies).
struct alignas(64) reply_entry {
    std::uint64_t tag;
    unsigned char payload[inline_bytes];
    std::uint64_t pad_;
};
static_assert(sizeof(reply_entry) == 64);

// Written by the proxy, read by producers; each counter on its own line.
//   completed: every ticket below it has completed (remote visibility); the
//              ring's credit too (see command)
//   status:    0 running, 1 stopped normally, 2 failed (message in `error`)
struct alignas(64) control_block {
    alignas(64) std::uint64_t completed;
    alignas(64) std::uint32_t status;
    std::uint32_t heartbeat;  // bumps while the proxy loops (a diagnostic only)
    char error[256];
};

inline constexpr std::uint32_t status_running = 0;
inline constexpr std::uint32_t status_stopped = 1;
inline constexpr std::uint32_t status_failed = 2;

}  // namespace proxy
PGAS_NAMESPACE_END
