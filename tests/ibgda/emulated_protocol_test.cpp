// The IBGDA protocol against the emulated NIC: wrap-around, batching, doorbell order, completions, errors, no NIC.
#include "support.hpp"
#include "../wait_timeout_format.hpp"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <utility>
#include <string>
#include <thread>
#include <vector>

namespace {

// An access policy that logs every step the NIC could observe, then does it.
struct recording_access {
    struct event {
        char kind;  // 'w' block, 'f' fence before record, 'r' record, 'F' fence before ring, 'd' doorbell
        std::uint64_t value;
    };
    std::vector<event>* log = nullptr;
    pgas::ibgda_system_access real{};

    void write_block(std::uint32_t* slot, const std::uint32_t* words) const {
        log->push_back({'w', reinterpret_cast<std::uint64_t>(slot)});
        real.write_block(slot, words);
    }
    void fence_before_doorbell_record() const { log->push_back({'f', 0}); }
    void write_doorbell_record(std::uint32_t* counter, std::uint32_t v) const {
        log->push_back({'r', v});
        real.write_doorbell_record(counter, v);
    }
    void fence_before_doorbell() const { log->push_back({'F', 0}); }
    void ring_doorbell(std::uint64_t* reg, std::uint64_t v, bool mmio) const {
        log->push_back({'d', v});
        CHECK(!mmio);  // the emulated NIC's doorbell is ordinary memory
        real.ring_doorbell(reg, v, mmio);
    }
    void write_cq_doorbell_record(std::uint32_t* consumer, std::uint32_t v) const {
        real.write_cq_doorbell_record(consumer, v);
    }
    std::uint64_t read_cqe_tail(const std::uint64_t* cqe) const { return real.read_cqe_tail(cqe); }
    std::uint8_t read_cqe_byte(const std::uint64_t* cqe, unsigned at) const { return real.read_cqe_byte(cqe, at); }
};

// A broken producer: it moves the doorbell record before its WQE is in the
// send queue (the WQE follows 20 ms later). The NIC must notice.
struct record_first_access : pgas::ibgda_system_access {
    struct pending {
        std::uint32_t* slot;
        std::uint32_t words[16];
    };
    std::vector<pending>* queue = nullptr;
    void write_block(std::uint32_t* slot, const std::uint32_t* words) const {
        pending p{slot, {}};
        std::memcpy(p.words, words, 64);
        queue->push_back(p);
    }
    void write_doorbell_record(std::uint32_t* counter, std::uint32_t v) const {
        pgas::ibgda_system_access::write_doorbell_record(counter, v);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        for (auto& p : *queue) pgas::ibgda_system_access::write_block(p.slot, p.words);
        queue->clear();
    }
};

}  // namespace

TEST_CASE("send queue wrap-around: 70000 WQEs through rings of 4 and 16 blocks wrap the 16-bit WQE counter") {
    // cq 1: a collapsed CQ; cq == blocks: a ring CQ read by owner bit, which wraps too.
    for (auto [blocks, cq] : {std::pair{4u, 1u}, std::pair{16u, 1u}, std::pair{4u, 4u}, std::pair{16u, 32u}}) {
        CAPTURE(blocks);
        CAPTURE(cq);
        auto w = pgas::world::init_local(2, test::options());
        auto slots = w.alloc<std::uint64_t>(64);
        auto count = w.alloc<std::uint64_t>(1);
        pgas::ibgda_domain ib(w, test::emulated(blocks, 1, cq));
        constexpr std::uint64_t posts = 70000;
        test::launch(w, ib, [&](const test::ib_ctx& ctx) {
            if (ctx.my_pe() == 0) {
                for (std::uint64_t i = 0; i < posts; ++i) {
                    pgas::p(ctx, slots + (i % 64), i, 1);                       // inline WRITE, unsignalled
                    if (i % 1000 == 0) pgas::atomic_swap(ctx, count, i, 1);      // 2-block masked CS, may straddle the ring end
                }
                pgas::quiet(ctx);
                auto& qp = ctx.transport.queue_pair(1);
                CHECK(qp.reserved.value > 65536);
                CHECK(qp.completed.value == qp.reserved.value);
                CHECK(qp.ready.value == qp.reserved.value);
                CHECK(qp.rung.value == qp.reserved.value);
            }
            pgas::barrier_all(ctx);
            if (ctx.my_pe() == 1) {
                for (std::uint64_t k = 0; k < 64; ++k) {
                    const std::uint64_t last = (posts - 1) - ((posts - 1 - k) % 64);
                    REQUIRE(ctx.local(slots)[k] == last);
                }
                CHECK(*ctx.local(count) == 69000);
            }
            pgas::barrier_all(ctx);
        });
        const auto s = ib.emulated_nic().stats();
        CHECK(ib.emulated_nic().first_violation() == "");
        // Selective signalling: about two CQEs per ring turn (plus the fetching
        // atomics and quiet's NOPs), not one per WQE.
        CHECK(s.cqes <= s.wqes * 2 / blocks + 100);
        CHECK(s.cqes >= 70000 / blocks);
    }
}

TEST_CASE("doorbell batching: nbi WQEs stay invisible to the NIC until the batch fills or quiet rings") {
    auto w = pgas::world::init_local(2, test::options());
    auto target = w.alloc<std::uint64_t>(8);
    pgas::ibgda_domain ib(w, test::emulated(64, 16));
    test::launch(w, ib, [&](const test::ib_ctx& ctx) {
        if (ctx.my_pe() == 0) {
            auto* source = ctx.local(target);  // registered: RDMA WRITEs, not inline
            for (int i = 0; i < 8; ++i) source[i] = 100 + std::uint64_t(i);
            for (int i = 0; i < 5; ++i) pgas::put_nbi(ctx, target + i, source + i, 2, 1);  // 16 bytes each: not inline
            auto& qp = ctx.transport.queue_pair(1);
            CHECK(qp.ready.value == 5);
            CHECK(qp.rung.value == 0);
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            for (int i = 0; i < 5; ++i) CHECK(w.local(target, 1)[i] == 0);  // never announced, never executed
            for (int i = 5; i < 16; ++i) pgas::put_nbi(ctx, target + (i % 6), source + (i % 6), 2, 1);
            CHECK(qp.rung.value == 16);  // the batch filled: one doorbell for 16 WQEs
            pgas::put_nbi(ctx, target, source, 2, 1);
            CHECK(qp.rung.value == 16);
            pgas::quiet(ctx);  // rings for the rest, with its NOP
            CHECK(qp.completed.value == 18);
        }
        pgas::barrier_all(ctx);
        if (ctx.my_pe() == 1)
            for (int i = 0; i < 7; ++i) CHECK(ctx.local(target)[i] == 100 + std::uint64_t(i));
        pgas::barrier_all(ctx);
    });
    CHECK(ib.emulated_nic().first_violation() == "");
}

TEST_CASE("doorbell order: WQE blocks, fence, big-endian record, fence, 8-byte ring of the WQE's first bytes") {
    auto w = pgas::world::init_local(2, test::options());
    auto target = w.alloc<std::uint64_t>(4);
    pgas::ibgda_domain ib(w, test::emulated(8));
    std::vector<recording_access::event> log;
    auto ctx = ib.context_with(recording_access{&log, {}}, 0);
    auto& qp = ctx.transport.queue_pair(1);
    for (std::uint64_t i = 0; i < 12; ++i) {  // 12 one-block WQEs through an 8-block ring: the slots wrap
        log.clear();
        pgas::p(ctx, target, i, 1);
        REQUIRE(log.size() == 5);
        CHECK(log[0].kind == 'w');
        CHECK(log[0].value == reinterpret_cast<std::uint64_t>(qp.send_queue + (i % 8) * 16));
        CHECK(log[1].kind == 'f');
        CHECK(log[2].kind == 'r');
        CHECK(log[2].value == pgas::mlx5::be32(std::uint32_t(i + 1)));
        CHECK(log[3].kind == 'F');
        CHECK(log[4].kind == 'd');
        std::uint64_t first8;
        std::memcpy(&first8, qp.send_queue + (i % 8) * 16, 8);
        CHECK(log[4].value == first8);  // ctrl: opcode, WQE index, qpn, ds
        CHECK((pgas::mlx5::from_be32(std::uint32_t(first8)) >> 8) == i);
    }
    pgas::quiet(ctx);
    CHECK(ib.emulated_nic().first_violation() == "");
    CHECK(*w.local(target, 1) == 11);
}

TEST_CASE("a doorbell record moved before its WQE is written is caught by the NIC and reported") {
    auto w = pgas::world::init_local(2, test::options(5000));
    auto target = w.alloc<std::uint64_t>(4);
    pgas::ibgda_domain ib(w, test::emulated(8));
    std::vector<record_first_access::pending> queue;
    record_first_access broken;
    broken.queue = &queue;
    auto ctx = ib.context_with(broken, 0);
    const std::string text = test::error_of([&] {
        pgas::p(ctx, target, std::uint64_t(1), 1);
        pgas::quiet(ctx);
    });
    CAPTURE(text);
    CHECK(test::contains(text, "on PE 0"));
    CHECK(test::contains(text, "to PE 1 failed"));
    CHECK(test::contains(text, "local QP operation error"));
    CHECK(test::contains(ib.emulated_nic().first_violation(), "announced it before it was written"));
}

TEST_CASE("an error CQE becomes a diagnostic naming the PE, the peer, the operation and the syndrome") {
  for (std::uint32_t cq : {1u, 64u}) {  // collapsed and ring CQ
    CAPTURE(cq);
    auto w = pgas::world::init_local(3, test::options(5000));
    auto data = w.alloc<std::uint64_t>(64);
    auto word = w.alloc<std::uint64_t>(1);
    pgas::ibgda_domain ib(w, test::emulated(64, 1, cq));
    auto ctx = ib.context(0);

    ib.emulated_nic().fail_next(0, 1, 0x13, 0x88);
    std::string text = test::error_of([&] { pgas::put(ctx, data, ctx.local(data), 64, 1); });
    CAPTURE(text);
    CHECK(test::contains(text, "pgas: put on PE 0: ibgda work request to PE 1 failed: RDMA WRITE"));
    CHECK(test::contains(text, "syndrome 0x13 (remote access error), vendor syndrome 0x88"));
    // The QP is in error: every later op to PE 1 says the same, none hangs.
    text = test::error_of([&] { pgas::quiet(ctx); });
    CHECK(test::contains(text, "pgas: quiet on PE 0: ibgda work request to PE 1 failed: RDMA WRITE"));

    ib.emulated_nic().fail_next(0, 2, 0x15, 0x81);
    text = test::error_of([&] { (void)pgas::atomic_fetch_add(ctx, word, std::uint64_t(1), 2); });
    CAPTURE(text);
    CHECK(test::contains(text, "to PE 2 failed: ATOMIC fetch-add"));
    CHECK(test::contains(text, "transport retry counter exceeded"));
    // PE 0's QP to itself still works.
    pgas::p(ctx, word, std::uint64_t(9), 0);
    CHECK(pgas::g(ctx, word, 0) == 9);
  }
}

TEST_CASE("a NIC that stops consuming is a timeout naming the PE, not a hang") {
    auto w = pgas::world::init_local(2, test::options(200));
    auto data = w.alloc<std::uint64_t>(4);
    pgas::ibgda_domain ib(w, test::emulated());
    ib.emulated_nic().stop();
    auto ctx = ib.context(0);
    const std::string text = test::error_of([&] { (void)pgas::g(ctx, data, 1); });
    CAPTURE(text);
    CHECK(test::contains(text, "pgas: get on PE 0: timed out after "));
    CHECK(test::contains(text, " ms waiting for a completion from the NIC on the ibgda QP to PE 1 (WQE blocks"));
    CHECK(test::is_wait_timeout(text));  // the format of every wait's timeout
}

TEST_CASE("many threads posting to one QP at once: reservation and in-order publication lose nothing") {
    auto w = pgas::world::init_local(2, test::options());
    auto counter = w.alloc<std::uint64_t>(1);
    auto cells = w.alloc<std::uint64_t>(4 * 512);
    pgas::ibgda_domain ib(w, test::emulated(16));
    auto ctx = ib.context(0);
    std::vector<std::thread> producers;
    for (int t = 0; t < 4; ++t)
        producers.emplace_back([&, t] {
            for (std::uint64_t i = 0; i < 512; ++i) {
                pgas::p(ctx, cells + (std::uint64_t(t) * 512 + i), i + 1, 1);
                pgas::atomic_add(ctx, counter, std::uint64_t(1), 1);
            }
            pgas::quiet(ctx);
        });
    for (auto& p : producers) p.join();
    CHECK(*w.local(counter, 1) == 4 * 512);
    for (std::uint64_t k = 0; k < 4 * 512; ++k) REQUIRE(w.local(cells, 1)[k] == k % 512 + 1);
    CHECK(ib.emulated_nic().first_violation() == "");
}

TEST_CASE("SPMD threads, one world and one domain each: QPs connect through the bootstrap allgather") {
    constexpr int n = 3;
    pgas::world::run_threads(n, [](pgas::world& w) {
        auto box = w.alloc<std::uint64_t>(n);
        pgas::ibgda_domain ib(w, test::emulated());
        auto ctx = ib.context();
        const int me = ctx.my_pe();
        for (int pe = 0; pe < n; ++pe) pgas::p(ctx, box + me, std::uint64_t(1000 + me), pe);
        pgas::barrier_all(ctx);
        for (int pe = 0; pe < n; ++pe) CHECK(ctx.local(box)[pe] == std::uint64_t(1000 + pe));
        pgas::barrier_all(ctx);
        CHECK(ib.emulated_nic().first_violation() == "");
        w.barrier();
    }, test::options());
}

TEST_CASE("without an RDMA NIC the hardware backend says so") {
    auto w = pgas::world::init_local(1, test::options());
    // nic_kind::hardware is the default
    const std::string text = test::error_of([&] { pgas::ibgda_domain ib(w); }, pgas::errc::transport_unavailable);
    CAPTURE(text);
    CHECK(test::contains(text, "no RDMA device"));
}

TEST_CASE("ibgda_domain rejects a send queue that is not a power of two in [4, 32768]") {
    auto w = pgas::world::init_local(1, test::options());
    for (std::uint32_t blocks : {0u, 2u, 100u, 65536u}) {
        CAPTURE(blocks);
        CHECK_THROWS_AS(pgas::ibgda_domain(w, test::emulated(blocks)), pgas::error);
    }
    for (std::uint32_t cq : {0u, 3u, 32u}) {  // a ring CQ smaller than the send queue could overrun
        CAPTURE(cq);
        CHECK_THROWS_AS(pgas::ibgda_domain(w, test::emulated(64, 1, cq)), pgas::error);
    }
}
