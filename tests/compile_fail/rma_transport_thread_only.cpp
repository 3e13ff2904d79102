// expect: has no put<G>\(std::uint64_t offset.*G = pgas::[a-z0-9_]+::block; T = thread_only_transport
// Concepts check every kind of group: a put that only a single thread may call fails for warp (tile<32>), by name.
#include "../host/mock_transport.hpp"

#include <concepts>

struct thread_only_transport : test::identity_only_transport {
    static constexpr bool provides_rma = true;
    template <class G>
        requires std::same_as<G, pgas::thread>
    void put(std::uint64_t, const void*, std::size_t, int) const {}
    template <class G>
    void put_nbi(std::uint64_t, const void*, std::size_t, int) const {}
    template <class G>
    void get(void*, std::uint64_t, std::size_t, int) const {}
    template <class G>
    void get_nbi(void*, std::uint64_t, std::size_t, int) const {}
    template <class G>
    void fence() const {}
    template <class G>
    void quiet() const {}
};

void misuse(const pgas::device::context<thread_only_transport>& ctx, pgas::symmetric_ptr<int> p, const int* src) {
    pgas::put(ctx, p, src, 1, 0);
}
