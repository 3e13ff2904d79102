// expect: has no get_nbi<G>\(void\* dst, std::uint64_t offset, std::size_t bytes, int pe\) const for this group G
// A transport that opts in to RMA and has every member but get_nbi: the error names get_nbi, not only the concept.
#include "../host/mock_transport.hpp"

struct no_get_nbi_transport : test::identity_only_transport {
    static constexpr bool provides_rma = true;
    template <class G>
    void put(std::uint64_t, const void*, std::size_t, int) const {}
    template <class G>
    void put_nbi(std::uint64_t, const void*, std::size_t, int) const {}
    template <class G>
    void get(void*, std::uint64_t, std::size_t, int) const {}
    template <class G>
    void fence() const {}
    template <class G>
    void quiet() const {}
};

void misuse(const pgas::device::context<no_get_nbi_transport>& ctx, pgas::symmetric_ptr<int> p, const int* src) {
    pgas::put(ctx, p, src, 1, 0);
}
