// pgas::error, its codes, and the one reporting path shared by host and device code.
#pragma once

#include <pgas/core/config.hpp>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include <nv/target>

PGAS_NAMESPACE_BEGIN

/// What went wrong, as pgas::error::code() reports it (and a GPU trap's line names with to_string).
enum class errc : int {
    invalid_argument = 1,   ///< zero/negative count, bad option value
    pe_out_of_range,        ///< a PE index outside [0, n_pes) or outside a team
    not_symmetric,          ///< an address or symmetric_ptr outside the heap / not an allocation
    heap_exhausted,         ///< the symmetric heap cannot satisfy an allocation
    collective_mismatch,    ///< PEs passed different arguments to a collective call
    misaligned,             ///< an atomic or vector op on a misaligned address
    transport_unavailable,  ///< the transport cannot run here (no GPU, no NVLink path, no NIC)
    timeout,                ///< a wait or bootstrap step exceeded its time limit
    peer_failed,            ///< another PE failed; this one stopped instead of hanging
    bootstrap,              ///< rendezvous / launch environment problems
    cuda,                   ///< a CUDA runtime or driver call failed
    system,                 ///< an OS call failed
};

/// A short English name of `code` ("PE out of range", ...); host and device.
PGAS_HD constexpr const char* to_string(errc code) {
    switch (code) {
        case errc::invalid_argument:
            return "invalid argument";
        case errc::pe_out_of_range:
            return "PE out of range";
        case errc::not_symmetric:
            return "not a symmetric address";
        case errc::heap_exhausted:
            return "symmetric heap exhausted";
        case errc::collective_mismatch:
            return "collective arguments differ between PEs";
        case errc::misaligned:
            return "misaligned address";
        case errc::transport_unavailable:
            return "transport unavailable";
        case errc::timeout:
            return "timed out";
        case errc::peer_failed:
            return "a peer PE failed";
        case errc::bootstrap:
            return "bootstrap failed";
        case errc::cuda:
            return "CUDA error";
        case errc::system:
            return "system error";
    }
    return "unknown error";
}

/// The one exception type of the library. what() reads
/// "pgas: <call> on PE <pe>: <detail>", so a log line alone says who did what.
/// Device-side failures on the host transport throw it too; on a GPU the same line is printed and the kernel traps.
class error : public std::runtime_error {
public:
    /// An error of `code` raised by `call` on world PE `pe` (-1: no single PE, e.g. all PEs of this process).
    error(errc code, int pe, const std::string& call, const std::string& detail)
        : std::runtime_error(format(pe, call, detail)), code_(code), pe_(pe), call_(call) {}

    /// What went wrong.
    errc code() const noexcept { return code_; }
    /// The world PE that raised it, or -1.
    int pe() const noexcept { return pe_; }
    /// The call that raised it ("alloc", "put", "world::init", ...).
    const std::string& call() const noexcept { return call_; }

private:
    static std::string format(int pe, const std::string& call, const std::string& detail) {
        std::string pe_text = pe >= 0 ? " on PE " + std::to_string(pe) : std::string();
        return "pgas: " + call + pe_text + ": " + detail;
    }
    errc code_;
    int pe_;
    std::string call_;
};

namespace detail {

[[noreturn]] inline void throw_error(errc code, int pe, const std::string& call, const std::string& detail) {
    throw error(code, pe, call, detail);
}

// Reports a failed device-layer check. On the host (host transport) it throws
// pgas::error so tests and programs can catch it; on the GPU it prints the
// same text and traps, since a kernel cannot unwind.
PGAS_HD inline void report(errc code, const char* call, int pe, const char* what, long long value) {
    NV_IF_TARGET(NV_IS_HOST, (throw_error(code, pe, call, std::string(what) + " " + std::to_string(value));),
                 (printf("pgas: %s on PE %d: %s %lld (%s)\n", call, pe, what, value, to_string(code)); __trap();))
}

}  // namespace detail

PGAS_NAMESPACE_END
