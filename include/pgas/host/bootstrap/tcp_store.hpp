// The multi-process bootstrap: a small TCP store on rank 0 that every other process connects to (token-checked,
// length-checked frames, every step bounded by a timeout). The wire is tcp_wire.hpp, the addresses
// tcp_endpoints.hpp, the root's admission of the ranks tcp_admission.hpp.
#pragma once

#include <pgas/core/error.hpp>
#include <pgas/host/bootstrap/bootstrap.hpp>
#include <pgas/host/bootstrap/launch_env.hpp>
#include <pgas/host/bootstrap/tcp_admission.hpp>
#include <pgas/host/bootstrap/tcp_endpoints.hpp>
#include <pgas/host/bootstrap/tcp_wire.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <cerrno>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

PGAS_NAMESPACE_BEGIN
namespace detail {

// The bootstrap of one process per PE. Rank 0 listens on launch.root_host:
// root_port and every other rank connects to it (retrying until the timeout,
// since rank 0 may start last). A collective sends each rank's block to rank 0,
// which gathers all and sends the result back: O(size) frames per call, for
// the few small exchanges of init, alloc and barriers.
//
// Failure handling: every step is bounded by launch.bootstrap_timeout. When
// rank 0 sees a peer close its connection (the process died), send a frame of
// the wrong size or kind, or miss the deadline, it sends an abort frame naming
// that PE to every other rank and throws; the others throw the same text.
// When rank 0 dies, the others see the connection close. So a dead peer is an
// error on every PE within the timeout, never a hang. After a failure every
// later call throws at once. Between collectives, watch() notices a peer that
// dies (its connection closes without a bye frame) within ~50 ms and reports
// it, so that device waits can stop instead of timing out.
class tcp_bootstrap final : public bootstrap {
public:
    explicit tcp_bootstrap(const launch_info& launch)
        : rank_(launch.rank),
          size_(launch.size),
          timeout_(launch.bootstrap_timeout),
          token_(launch.token),
          root_(launch.root_path.empty() ? launch.root_host + ":" + std::to_string(launch.root_port)
                                         : launch.root_path),
          root_path_(launch.root_path) {
        if (size_ < 1 || rank_ < 0 || rank_ >= size_)
            throw_error(errc::invalid_argument, rank_, "bootstrap",
                        "rank " + std::to_string(rank_) + " outside a world of " + std::to_string(size_));
        if (size_ > max_world_size)
            throw_error(errc::invalid_argument, rank_, "bootstrap",
                        "world size " + std::to_string(size_) + " is larger than the limit of " +
                            std::to_string(max_world_size));
        if (timeout_.count() <= 0)
            throw_error(errc::invalid_argument, rank_, "bootstrap", "the bootstrap timeout must be positive");
        if (rank_ == 0)
            serve(launch);
        else
            join(launch);
    }

    tcp_bootstrap(const tcp_bootstrap&) = delete;
    tcp_bootstrap& operator=(const tcp_bootstrap&) = delete;

    // Says goodbye (so the others see a departure, not a death) unless this
    // bootstrap failed or an exception is unwinding through its owner.
    ~tcp_bootstrap() override {
        unwatch();
        if (!broken_.empty() || std::uncaught_exceptions() > 0) return;
        const auto deadline = tcp::clock::now() + std::chrono::milliseconds(200);
        for (auto& peer : peers_)
            if (peer) (void)tcp::send_frame(peer.get(), tcp::kind::bye, nullptr, 0, deadline);
        if (root_fd_) (void)tcp::send_frame(root_fd_.get(), tcp::kind::bye, nullptr, 0, deadline);
    }

    int rank() const override { return rank_; }
    int size() const override { return size_; }
    std::chrono::milliseconds timeout() const override { return timeout_; }

    // At finalize: the failure this bootstrap recorded, or can see now (a peer that died, the root's abort or its
    // lost connection), as its error text; "" when there is none (peers that left in good order are none).
    std::string failure_seen() {
        if (size_ == 1) return {};
        std::lock_guard io(io_);
        if (rank_ == 0 && broken_.empty()) (void)watch_peers();
        if (!broken_.empty() || rank_ == 0) return broken_;
        if (root_left_ || !root_fd_ || watch_root() < 0 || root_left_) return {};
        try {
            (void)root_header("world finalize", tcp::clock::now() + std::chrono::milliseconds(1000), 0);
        } catch (const error& e) {
            const std::string what = e.what(), prefix = "pgas: world finalize on PE " + std::to_string(rank_) + ": ";
            return what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
        }
        return {};
    }

    void check_peers(const std::string& call, const std::vector<int>& awaited) override {
        if (size_ == 1) return;
        std::lock_guard io(io_);
        if (!broken_.empty()) throw_error(broken_code_, rank_, call, "the bootstrap failed earlier: " + broken_);
        if (rank_ == 0) {
            if (const int dead = watch_peers(); dead >= 0) throw_error(errc::peer_failed, rank_, call, broken_);
            fail_if_stopped(call, awaited);
            return;
        }
        if (root_left_) fail(errc::peer_failed, call, "the root (PE 0) has left: it destroyed its world", 0);
        // The root's connection closed, or its abort naming the failed PE waits: root_header throws either.
        if (watch_root() >= 0) (void)root_header(call, tcp::clock::now() + std::chrono::milliseconds(1000), 0);
        fail_if_stopped(call, {0});  // the root names the others
    }

    // Starts a thread that, while no collective runs, checks every ~50 ms
    // whether a peer died (rank 0: a peer's connection closed without a bye;
    // the others: rank 0's closed, or rank 0 sent an abort naming a PE) and
    // then calls on_failure(failed PE) once, from that thread. The world
    // raises its peer-failure flag with it. Later collectives throw.
    // on_tick runs on every wake-up (~50 ms), also during collectives and
    // after a failure: the world stamps its heartbeat with it.
    //
    // stopped_peer(&silent_ns), when given, names a peer whose heartbeat is
    // older than the bound (detail::stale_peer; -1: none): host collectives
    // ask it while they wait, so that a stopped PE is named after the
    // heartbeat bound there too, not after the whole bootstrap timeout.
    void watch(std::function<void(int failed_pe)> on_failure, std::function<void()> on_tick = {},
               std::function<int(std::uint64_t* silent_ns)> stopped_peer = {}) {
        if (size_ == 1 || watcher_.joinable()) return;
        on_failure_ = std::move(on_failure);
        on_tick_ = std::move(on_tick);
        stopped_peer_ = std::move(stopped_peer);
        watcher_ = std::thread([this] { watch_loop(); });
    }

    // Stops the watcher thread (idempotent); on return on_failure is not
    // running and will not run. Owners whose callback reaches state that dies
    // before the bootstrap call this first.
    void unwatch() {
        if (!watcher_.joinable()) return;
        {
            std::lock_guard lock(stop_mutex_);
            stopping_ = true;
        }
        stop_changed_.notify_all();
        watcher_.join();
    }

protected:
    void exchange(const exchange_id& id, const void* mine, void* all, std::size_t bytes) override {
        std::lock_guard io(io_);  // the watcher stays off the sockets meanwhile
        if (!broken_.empty()) throw_error(broken_code_, rank_, what(id), "the bootstrap failed earlier: " + broken_);
        if (rank_ == 0)
            exchange_root(id, mine, all, bytes);
        else if (size_ > 1)
            exchange_peer(id, mine, all, bytes);
    }

private:
    static constexpr std::size_t prefix_bytes = tcp::prefix_bytes;
    // A non-root waits this much longer than the root, so the root's
    // explanation (which PE failed) arrives before its own timeout.
    static constexpr std::chrono::milliseconds answer_slack{1000};

    static std::string what(const exchange_id& id) { return describe(id); }

    // How often a waiting collective asks stopped_peer (the watcher's period).
    static constexpr int stopped_check_ms = 50;

    // A collective waiting on `pes` fails naming the first whose heartbeat stopped, within the heartbeat bound
    // as device waits do, not at the bootstrap timeout (30 s).
    void fail_if_stopped(const std::string& call, const std::vector<int>& pes) {
        if (!stopped_peer_) return;
        std::uint64_t silent_ns = 0;
        const int stopped = stopped_peer_(&silent_ns);
        if (stopped < 0 || std::find(pes.begin(), pes.end(), stopped) == pes.end()) return;
        fail(errc::peer_failed, call,
             (stopped == 0 ? std::string("the root (PE 0)") : "PE " + std::to_string(stopped)) +
                 " stopped responding: no heartbeat for " + std::to_string(silent_ns / 1000000) +
                 " ms (the process is stopped, or hangs with its watcher thread)",
             stopped);
    }

    // --- rank 0 ---------------------------------------------------------------

    void serve(const launch_info& launch) {
        peers_.resize(std::size_t(size_));
        left_.assign(std::size_t(size_), false);
        if (size_ == 1) return;
        tcp_admission admission(launch, peers_);  // listens until every rank is welcome
        root_ = admission.where();
        const auto deadline = tcp::clock::now() + timeout_;
        const auto [joined, left] = admission.admit_all(deadline);
        if (left > 0)
            fail(errc::peer_failed, "bootstrap init",
                 "PE " + std::to_string(left) +
                     " joined, then exited or closed its connection before every PE had joined (the process died)",
                 left);
        if (joined < size_ - 1) {
            std::vector<int> missing;
            for (int r = 1; r < size_; ++r)
                if (!peers_[std::size_t(r)]) missing.push_back(r);
            fail(errc::timeout, "bootstrap init",
                 "PE(s) " + pe_list(missing) + " did not connect to the root at " + root_ + " within " +
                     std::to_string(timeout_.count()) +
                     " ms (they failed before init, or were started with another PGAS_ROOT or world size)" +
                     admission.rejected(),
                 missing.front());
        }
        for (int r = 1; r < size_; ++r)
            if (tcp::send_frame(peers_[std::size_t(r)].get(), tcp::kind::welcome, nullptr, 0,
                                deadline + answer_slack) != tcp::io::ok)
                fail(errc::peer_failed, "bootstrap init",
                     "PE " + std::to_string(r) + " closed its connection during init", r);
    }

    void exchange_root(const exchange_id& call, const void* mine, void* all, std::size_t bytes) {
        auto* out = static_cast<unsigned char*>(all);
        std::memcpy(out, mine, bytes);
        for (int r = 1; r < size_; ++r)
            if (left_[std::size_t(r)])
                fail(errc::peer_failed, what(call),
                     "PE " + std::to_string(r) + " has left: it destroyed its world before this collective call", r);
        const auto deadline = tcp::clock::now() + timeout_;
        std::vector<int> pending;
        for (int r = 1; r < size_; ++r) pending.push_back(r);
        while (!pending.empty()) {
            std::vector<pollfd> polls;
            for (int r : pending) polls.push_back({peers_[std::size_t(r)].get(), POLLIN, 0});
            const int n = ::poll(polls.data(), polls.size(), std::min(tcp::remaining_ms(deadline), stopped_check_ms));
            if (n < 0 && errno == EINTR) continue;
            if (n == 0 && tcp::clock::now() < deadline) {
                fail_if_stopped(what(call), pending);
                continue;
            }
            if (n <= 0) {
                fail(errc::timeout, what(call),
                     "PE(s) " + pe_list(pending) + " did not reach it within " + std::to_string(timeout_.count()) +
                         " ms (a PE hangs or skipped a collective call; PGAS_BOOTSTRAP_TIMEOUT_MS raises the limit)",
                     pending.front());
            }
            std::vector<int> still;
            for (std::size_t i = 0; i < polls.size(); ++i) {
                if (polls[i].revents == 0) {
                    still.push_back(pending[i]);
                    continue;
                }
                receive_block(pending[i], call, out + bytes * std::size_t(pending[i]), bytes, deadline);
            }
            pending = std::move(still);
        }
        const auto prefix = tcp::encode_prefix(call);
        for (int r = 1; r < size_; ++r)
            if (tcp::send_frame(peers_[std::size_t(r)].get(), tcp::kind::data, out, bytes * std::size_t(size_),
                                deadline + answer_slack, prefix.data(), prefix.size()) != tcp::io::ok)
                fail(errc::peer_failed, what(call), "PE " + std::to_string(r) + " exited or closed its connection", r);
    }

    void receive_block(int r, const exchange_id& call, unsigned char* into, std::size_t bytes,
                       tcp::clock::time_point deadline) {
        const int fd = peers_[std::size_t(r)].get();
        const std::string pe = "PE " + std::to_string(r);
        unsigned char raw[tcp::header_bytes];
        auto result = tcp::recv_all(fd, raw, sizeof raw, deadline);
        if (result == tcp::io::ok) {
            // Nothing longer than this exchange's block (plus prefix) is accepted.
            auto head = tcp::decode_header(raw, sizeof raw, prefix_bytes + bytes);
            if (!head && tcp::get(raw + 6, 2) == std::uint16_t(tcp::kind::data) && tcp::get(raw, 4) == tcp::magic)
                head = tcp::decode_header(raw, sizeof raw, ~std::uint64_t{0});  // a bigger block: named below
            if (!head) fail(errc::bootstrap, what(call), pe + " sent a malformed frame: " + head.problem, r);
            if (head->type == tcp::kind::bye)
                fail(errc::peer_failed, what(call),
                     pe + " has left: it destroyed its world before this collective call", r);
            if (head->type != tcp::kind::data || head->length < prefix_bytes)
                fail(errc::bootstrap, what(call), pe + " sent a malformed frame (not a data frame)", r);
            unsigned char prefix[prefix_bytes];
            result = tcp::recv_all(fd, prefix, prefix_bytes, deadline);
            if (result == tcp::io::ok) {
                auto theirs = tcp::decode_prefix(prefix, prefix_bytes, head->length - prefix_bytes);
                if (!theirs) fail(errc::bootstrap, what(call), pe + " sent a malformed frame: " + theirs.problem, r);
                if (!(*theirs == call)) fail(errc::collective_mismatch, what(call), mismatch_text(r, *theirs, 0, call));
                result = tcp::recv_all(fd, into, bytes, deadline);
            }
        }
        if (result == tcp::io::closed)
            fail(errc::peer_failed, what(call), pe + " exited or closed its connection (the process died or failed)",
                 r);
        if (result == tcp::io::timeout) fail(errc::timeout, what(call), pe + " sent a partial frame and stalled", r);
    }

    // --- other ranks ------------------------------------------------------------

    void join(const launch_info& launch) {
        const auto deadline = tcp::clock::now() + timeout_;
        connect_root(launch, deadline);
        const auto connected_at = tcp::clock::now();
        const auto hello = tcp::encode_hello(rank_, size_, token_);
        if (tcp::send_frame(root_fd_.get(), tcp::kind::hello, hello.data(), hello.size(), deadline) != tcp::io::ok)
            fail(errc::bootstrap, "bootstrap init",
                 "the root at " + root_ + " closed the connection during the handshake");
        // The root listened before it accepted this connection, and it sends its verdict (welcome, or an abort
        // naming the PEs that did not join) within the timeout of listening: past that, it is stopped or hangs.
        const auto verdict_by = connected_at + timeout_ + answer_slack;
        unsigned char raw[tcp::header_bytes];
        const auto result = tcp::recv_all(root_fd_.get(), raw, sizeof raw, verdict_by);
        if (result == tcp::io::timeout)
            fail(errc::timeout, "bootstrap init",
                 "the root (PE 0) at " + root_ + " accepted this process but sent no verdict within " +
                     std::to_string((timeout_ + answer_slack).count()) +
                     " ms: a root that waits for a PE names it before then, so the root is stopped or hangs",
                 0);
        if (result == tcp::io::closed)
            fail(errc::peer_failed, "bootstrap init",
                 "the root (PE 0) at " + root_ + " closed the connection during the handshake (it exited or failed)",
                 0);
        auto head = tcp::decode_header(raw, sizeof raw, tcp::max_abort_bytes);
        if (!head) fail(errc::bootstrap, "bootstrap init", root_ + " is not a pgas bootstrap root: " + head.problem);
        if (head->type == tcp::kind::reject)
            fail(errc::bootstrap, "bootstrap init",
                 "the root at " + root_ + " rejected this process: " +
                     tcp::text_payload(root_fd_.get(), head->length, deadline + answer_slack));
        if (head->type == tcp::kind::abort) {
            std::vector<unsigned char> payload(head->length);
            if (tcp::recv_all(root_fd_.get(), payload.data(), payload.size(), deadline + answer_slack) != tcp::io::ok)
                fail(errc::peer_failed, "bootstrap init", "the root (PE 0) aborted; its reason was lost", 0);
            auto reason = tcp::decode_abort(payload.data(), payload.size(), size_);
            if (!reason) fail(errc::bootstrap, "bootstrap init", "malformed abort from the root: " + reason.problem, 0);
            fail(reason->code, "bootstrap init", "the root (PE 0) aborted: " + reason->text, reason->failed_pe);
        }
        if (head->type != tcp::kind::welcome || head->length != 0)
            fail(errc::bootstrap, "bootstrap init", "unexpected frame from the root during the handshake");
    }

    void connect_root(const launch_info& launch, tcp::clock::time_point deadline) {
        const auto tcp_found = root_path_.empty() ? tcp::endpoints(launch, false, rank_) : std::vector<tcp::endpoint>{};
        int last_error = ETIMEDOUT;
        // Rank 0 may not listen yet: retry until the deadline.
        for (;;) {
            auto found = tcp_found;
            if (!root_path_.empty())
                for (const auto& path : tcp::private_socket(root_path_).for_ranks())
                    found.push_back(tcp::unix_endpoint(path, rank_));
            if (!root_path_.empty() && found.empty()) last_error = ENOENT;
            for (const auto& e : found) {
                tcp::unique_fd s(::socket(e.family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
                if (!s) continue;
                int rc = ::connect(s.get(), reinterpret_cast<const sockaddr*>(&e.address), e.length);
                if (rc != 0 && (errno == EINPROGRESS || errno == EAGAIN)) {
                    if (tcp::wait_ready(s.get(), POLLOUT, deadline) == tcp::io::timeout) {
                        last_error = ETIMEDOUT;
                        continue;
                    }
                    int code = 0;
                    socklen_t length = sizeof code;
                    ::getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &code, &length);
                    rc = code == 0 ? 0 : -1;
                    errno = code;
                }
                if (rc == 0) {
                    if (e.family == AF_UNIX && tcp::peer_uid(s.get()) != long(::getuid()))
                        throw_error(errc::bootstrap, rank_, "bootstrap init",
                                    "the rendezvous socket " + root_ + " belongs to uid " +
                                        std::to_string(tcp::peer_uid(s.get())) + ", not this job's user");
                    if (e.family != AF_UNIX) tcp::no_delay(s.get());
                    root_fd_ = std::move(s);
                    return;
                }
                last_error = errno;
            }
            if (tcp::clock::now() + std::chrono::milliseconds(50) >= deadline) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        throw_error(errc::timeout, rank_, "bootstrap init",
                    "cannot reach the root (PE 0) at " + root_ + " within " + std::to_string(timeout_.count()) +
                        " ms: " + tcp::errno_text(last_error) + " (PE 0 failed before init, or the address is wrong; " +
                        launch.source + ")");
    }

    void exchange_peer(const exchange_id& call, const void* mine, void* all, std::size_t bytes) {
        if (root_left_) fail(errc::peer_failed, what(call), "the root (PE 0) has left: it destroyed its world", 0);
        const auto deadline = tcp::clock::now() + timeout_ + answer_slack;
        const int fd = root_fd_.get();
        const auto prefix = tcp::encode_prefix(call);
        // When the send fails the root may have aborted already: its reason is
        // still readable, so look for it briefly before reporting a lost root.
        const bool sent =
            tcp::send_frame(fd, tcp::kind::data, mine, bytes, deadline, prefix.data(), prefix.size()) == tcp::io::ok;
        const std::uint64_t expected = prefix_bytes + bytes * std::uint64_t(size_);
        const auto head = root_header(what(call), sent ? deadline : tcp::clock::now() + std::chrono::milliseconds(500),
                                      expected, sent);
        if (head.type != tcp::kind::data || head.length != expected)
            fail(errc::bootstrap, what(call),
                 "the root sent " + std::to_string(head.length) + " bytes where " + std::to_string(expected) +
                     " were expected");
        unsigned char their_prefix[prefix_bytes];
        if (auto r = tcp::recv_all(fd, their_prefix, prefix_bytes, deadline); r != tcp::io::ok)
            root_lost_mid_answer(call, r);
        auto theirs = tcp::decode_prefix(their_prefix, prefix_bytes, bytes);
        if (!theirs) fail(errc::bootstrap, what(call), "malformed answer from the root: " + theirs.problem, 0);
        // No value is read from an answer to another call.
        if (!(*theirs == call)) fail(errc::collective_mismatch, what(call), mismatch_text(0, *theirs, rank_, call));
        if (auto r = tcp::recv_all(fd, all, bytes * std::size_t(size_), deadline); r != tcp::io::ok)
            root_lost_mid_answer(call, r);
    }

    // A stopped root is not a lost connection.
    [[noreturn]] void root_lost_mid_answer(const exchange_id& call, tcp::io result) {
        if (result == tcp::io::timeout)
            fail(errc::timeout, what(call),
                 "the root (PE 0) stopped sending its answer midway and sent nothing more until the deadline: it is "
                 "stopped or hangs",
                 0);
        fail(errc::peer_failed, what(call), "lost the connection to the root (PE 0) mid-answer: it exited or failed",
             0);
    }

    // The next frame from the root, checked: a lost connection, a bye, an
    // abort (thrown with the root's code and text), a malformed header or one
    // longer than max_length never return.
    tcp::header root_header(const std::string& call, tcp::clock::time_point deadline, std::uint64_t max_length,
                            bool waited_full = true) {
        unsigned char raw[tcp::header_bytes];
        while (tcp::wait_ready(root_fd_.get(), POLLIN,
                               std::min(deadline, tcp::clock::now() + std::chrono::milliseconds(stopped_check_ms))) ==
                   tcp::io::timeout &&
               tcp::clock::now() < deadline)
            fail_if_stopped(call, {0});  // the root names any other stopped PE itself
        const auto result = tcp::recv_all(root_fd_.get(), raw, sizeof raw, deadline);
        if (result == tcp::io::timeout && waited_full)
            fail(errc::timeout, call,
                 "no answer from the root (PE 0) within " + std::to_string((timeout_ + answer_slack).count()) +
                     " ms (the root names a PE that does not reach the call before then: it is stopped or hangs, "
                     "or it entered the call more than " +
                     std::to_string(answer_slack.count()) + " ms after this PE)",
                 0);
        if (result != tcp::io::ok)
            fail(errc::peer_failed, call,
                 "lost the connection to the root (PE 0) at " + root_ + ": it exited or failed", 0);
        auto head = tcp::decode_header(raw, sizeof raw, std::max<std::uint64_t>(max_length, tcp::max_abort_bytes));
        if (!head) fail(errc::bootstrap, call, "malformed frame from the root at " + root_ + ": " + head.problem, 0);
        if (head->type == tcp::kind::bye)
            fail(errc::peer_failed, call, "the root (PE 0) has left: it destroyed its world", 0);
        if (head->type == tcp::kind::abort) {
            std::vector<unsigned char> payload(head->length);
            if (tcp::recv_all(root_fd_.get(), payload.data(), payload.size(),
                              tcp::clock::now() + std::chrono::milliseconds(1000)) != tcp::io::ok)
                fail(errc::peer_failed, call, "the root (PE 0) aborted; its reason was lost", 0);
            auto reason = tcp::decode_abort(payload.data(), payload.size(), size_);
            if (!reason) fail(errc::bootstrap, call, "malformed abort from the root: " + reason.problem, 0);
            fail(reason->code, call, "the root (PE 0) aborted: " + reason->text, reason->failed_pe);
        }
        if (head->type != tcp::kind::reject && head->length > max_length)
            fail(errc::bootstrap, call,
                 "the root sent a frame of " + std::to_string(head->length) + " bytes (limit " +
                     std::to_string(max_length) + ")",
                 0);
        return *head;
    }

    // --- both -------------------------------------------------------------------

    // Records the failure, tells every connected rank (root) or drops the
    // connection to the root (others), and throws. failed_pe: the PE at
    // fault when known (the one whose waits should name it), else -1.
    [[noreturn]] void fail(errc code, const std::string& call, const std::string& detail, int failed_pe = -1) {
        abort_all(code, call, detail, failed_pe);
        throw_error(code, rank_, call, detail);
    }

    void abort_all(errc code, const std::string& call, const std::string& detail, int failed_pe) {
        broken_ = detail;
        broken_code_ = code;
        if (rank_ == 0) {
            std::string text = "PE 0 in " + call + ": " + detail;
            if (text.size() > tcp::max_abort_bytes - tcp::abort_fixed_bytes)
                text.resize(tcp::max_abort_bytes - tcp::abort_fixed_bytes);
            const auto payload = tcp::encode_abort(code, failed_pe, text);
            const auto deadline = tcp::clock::now() + std::chrono::milliseconds(1000);
            for (auto& peer : peers_)
                if (peer) {
                    (void)tcp::send_frame(peer.get(), tcp::kind::abort, payload.data(), payload.size(), deadline);
                    ::shutdown(peer.get(), SHUT_WR);
                }
            // Closing a socket with unread bytes sends a reset, which makes the
            // peer's kernel drop the abort frame before it is read: read what
            // the peers still send until they close (they do on the abort).
            const auto drained = tcp::clock::now() + std::chrono::milliseconds(500);
            for (auto& peer : peers_)
                if (peer) tcp::drain(peer.get(), drained);
            for (auto& peer : peers_) peer.reset();
        }
        root_fd_.reset();
    }

    // --- the watcher: peer deaths between collectives ---------------------------

    void watch_loop() {
        std::unique_lock stop_lock(stop_mutex_);
        while (!stop_changed_.wait_for(stop_lock, std::chrono::milliseconds(50), [&] { return stopping_; })) {
            if (on_tick_) on_tick_();
            std::unique_lock io(io_, std::try_to_lock);
            if (!io || !broken_.empty() || reported_) continue;
            const int failed = rank_ == 0 ? watch_peers() : watch_root();
            if (failed < 0) continue;
            reported_ = true;
            if (on_failure_) on_failure_(failed);
        }
    }

    // Rank 0: a peer whose connection ended without a bye died; tell everyone.
    // POLLRDHUP also shows a peer that died after sending its next
    // collective's frame (still unread here).
    int watch_peers() {
        for (int r = 1; r < size_; ++r) {
            auto& peer = peers_[std::size_t(r)];
            if (!peer || left_[std::size_t(r)]) continue;
            pollfd p{peer.get(), POLLIN | POLLRDHUP, 0};
            if (::poll(&p, 1, 0) < 0) continue;
            unsigned char raw[tcp::header_bytes];
            const ssize_t n = ::recv(peer.get(), raw, sizeof raw, MSG_PEEK | MSG_DONTWAIT);
            if (n == ssize_t(sizeof raw) && tcp::get(raw, 4) == tcp::magic &&
                tcp::kind(tcp::get(raw + 6, 2)) == tcp::kind::bye) {
                (void)::recv(peer.get(), raw, sizeof raw, MSG_DONTWAIT);
                left_[std::size_t(r)] = true;
                continue;
            }
            if (!(p.revents & (POLLRDHUP | POLLHUP | POLLERR))) continue;
            abort_all(errc::peer_failed, "watch",
                      "PE " + std::to_string(r) +
                          " exited or closed its connection outside a collective call (the process died)",
                      r);
            return r;
        }
        return -1;
    }

    // Other ranks: rank 0's connection closed, or an abort naming a PE waits.
    // The abort stays unread, for the next collective to throw its text.
    int watch_root() {
        if (!root_fd_ || root_left_) return -1;
        unsigned char raw[tcp::header_bytes + 8];
        const ssize_t n = ::recv(root_fd_.get(), raw, sizeof raw, MSG_PEEK | MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return 0;
        if (n < ssize_t(tcp::header_bytes)) return -1;
        const auto type = tcp::kind(tcp::get(raw + 6, 2));
        if (type == tcp::kind::bye) {
            (void)::recv(root_fd_.get(), raw, tcp::header_bytes, MSG_DONTWAIT);
            root_left_ = true;
            return -1;
        }
        if (type == tcp::kind::abort && n == ssize_t(sizeof raw)) {
            // Only the fixed part is peeked: the PE it names (when in range).
            auto reason = tcp::decode_abort(raw + tcp::header_bytes, tcp::abort_fixed_bytes, size_);
            return reason && reason->failed_pe >= 0 ? reason->failed_pe : 0;
        }
        return -1;
    }

    int rank_;
    int size_;
    std::chrono::milliseconds timeout_;
    std::string token_;
    std::string root_;                   // host:port or the socket path, for messages
    std::string root_path_;              // a Unix-domain rendezvous: its socket path
    std::vector<tcp::unique_fd> peers_;  // rank 0: one per rank (index 0 empty)
    tcp::unique_fd root_fd_;             // other ranks: the connection to rank 0
    std::string broken_;
    errc broken_code_ = errc::bootstrap;
    std::vector<bool> left_;  // rank 0: peers that said bye
    bool root_left_ = false;  // other ranks: rank 0 said bye
    // The watcher (see watch()); io_ keeps it off the sockets during collectives.
    std::mutex io_;
    std::function<void(int)> on_failure_;
    std::function<void()> on_tick_;
    std::function<int(std::uint64_t*)> stopped_peer_;
    bool reported_ = false;
    std::mutex stop_mutex_;
    std::condition_variable stop_changed_;
    bool stopping_ = false;
    std::thread watcher_;
};

}  // namespace detail
PGAS_NAMESPACE_END
