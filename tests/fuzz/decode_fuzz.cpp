// libFuzzer target for one decoder of the TCP bootstrap's frames (PGAS_FUZZ_DECODER picks which: header, hello,
// prefix, abort). A decoder must return a value or a reason for any bytes: no crash, no UB, no allocation beyond
// its input. Built and run by run_fuzzers.sh (ctest "fuzz: ..."); crashes found later belong in corpus/<decoder>/.
#include <pgas/host/bootstrap/tcp_store.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace tcp = pgas::detail::tcp;

// The first byte picks a world size for the checks that depend on one.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const int world = size > 0 ? 1 + data[0] : 1;
    const auto* p = size > 0 ? data + 1 : data;
    const std::size_t n = size > 0 ? size - 1 : 0;
    std::size_t used = 0;
#if defined(PGAS_FUZZ_DECODER_header)
    auto out = tcp::decode_header(p, n, std::uint64_t(world) << 8);
    if (out) used = out->length <= (std::uint64_t(world) << 8) ? 1 : (std::abort(), 0);
#elif defined(PGAS_FUZZ_DECODER_hello)
    auto out = tcp::decode_hello(p, n);
    if (out) {
        if (out->rank < 0 || out->rank >= out->size || out->size > pgas::detail::max_world_size) std::abort();
        used = out->token.size();
    }
#elif defined(PGAS_FUZZ_DECODER_prefix)
    auto out = tcp::decode_prefix(p, n, std::uint64_t(world));
    if (out) {
        // What decodes must encode to the same bytes and describe itself.
        if (tcp::encode_prefix(*out) != std::vector<unsigned char>(p, p + n)) std::abort();
        used = pgas::detail::describe(*out).size();
    }
#elif defined(PGAS_FUZZ_DECODER_abort)
    auto out = tcp::decode_abort(p, n, world);
    if (out) {
        if (out->failed_pe < -1 || out->failed_pe >= world) std::abort();
        used = pgas::error(out->code, 0, "fuzz", out->text).code() == out->code ? out->text.size() : 0;
    }
#else
#error "define PGAS_FUZZ_DECODER_<header|hello|prefix|abort>"
#endif
    if (!out && out.problem.empty()) std::abort();  // a rejection always says why
    return used > n ? -1 : 0;
}
