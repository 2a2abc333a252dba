// A fault-injecting TCP proxy for tests: it listens on 127.0.0.1:<free port>
// in front of one redis-server (127.0.0.1:<upstream port>) and forwards bytes
// both ways unchanged, but parses RESP enough to pair every request with its
// reply (in order, per connection, pipelines included). So a test can make a
// reply late after the server already ran the request, cut a connection
// between the server's work and the client's read, or hang the "server",
// while the real server stays healthy and can be inspected directly
// (redis_test::Raw on server.port()).
//
//   redis_test::RedisServer server;
//   fault_test::FaultProxy proxy(server.port());
//   weave::configure_dedupe({.url = proxy.url(), .command_timeout = 500ms});
//   proxy.delay_reply("SET", 1500ms);                      // the next SET's reply comes 1.5 s late
//   proxy.cut_after_request({"EVALSHA", "{weave:queue:jobs}"});  // it runs, the client sees EOF
//   proxy.delay_reply(fault_test::Match::where([](const fault_test::Argv& a) { return a.size() > 3; }), 1s);
//   proxy.black_hole(true);                                // nothing moves until black_hole(false)
//   proxy.drop_connections();                              // every connection closed, now
//   CHECK(proxy.seen("SET") == 1);                         // SETs forwarded so far
//
// One background thread with poll(); POSIX and the standard library only.
// Requests: arrays of bulk strings and inline commands. Replies: every RESP2
// type (nested arrays, nil, errors). A connection that subscribes (SUBSCRIBE,
// SSUBSCRIBE, PSUBSCRIBE) gets pushes that answer no request: from then on
// its replies are passed on as they come, unpaired (a delay there holds back
// everything the server sends on it until `delay` after the matching request
// went out; a cut there closes once the request is written to the server).
// A Cluster or Sentinel deployment behind proxies announces the proxies'
// ports (proxied_deployment.h), so redirects and discovery lead to them.
// Not handled: RESP3 (HELLO 3), TLS, blocking commands under
// cut_after_request (see there).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace fault_test {

// A parsed request: the command name, then its arguments.
using Argv = std::vector<std::string>;

// Which requests a fault applies to: all of the set conditions hold.
struct Match {
  std::string command;       // the command name, case-insensitive ("" = any)
  std::string arg_contains;  // some argument after the name contains this ("" = any)
  std::function<bool(const Argv&)> predicate;  // over the whole argv (empty = any)

  Match(const char* command_name) : command(command_name) {}  // "EVALSHA"
  Match(std::string command_name = "", std::string contains = "", std::function<bool(const Argv&)> pred = {})
      : command(std::move(command_name)), arg_contains(std::move(contains)), predicate(std::move(pred)) {}
  static Match where(std::function<bool(const Argv&)> pred) { return Match("", "", std::move(pred)); }

  bool matches(const Argv& argv) const;
};

class FaultProxy {
 public:
  // Listens at once; each accepted connection gets its own connection to
  // the upstream (a refused one closes the client's).
  explicit FaultProxy(int upstream_port);
  // Stops the thread and closes every socket.
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  int port() const noexcept { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

  // The replies to the next `count` requests that match are held back for
  // `delay` after they came from the server (which ran the request), and
  // every later reply of their connection waits behind them (order is kept,
  // as TCP keeps it). A reply still held when its client closes is dropped.
  void delay_reply(Match match, std::chrono::milliseconds delay, int count = 1);
  // The next `count` requests that match are forwarded to the server, and
  // once the server has answered (so it surely ran them) the client's
  // connection and its upstream one are closed instead of delivering that
  // reply (replies before it are delivered first): the client sees EOF.
  // Requests the client sent after it on that connection are not forwarded.
  // (A request the server never answers, e.g. a BLPOP, is never cut.)
  void cut_after_request(Match match, int count = 1);
  // Forgets the delays and cuts not applied yet (those applied stay).
  void clear_rules();
  // On: nothing is forwarded either way; connections stay open, and bytes
  // that arrive are read and kept (new connections are accepted too). Off:
  // what was kept is forwarded in order, unless its connection closed
  // meanwhile (a client that gave up closes its upstream: what it sent
  // during the hole never reaches the server).
  void black_hole(bool on);
  // Closes every current connection (both sides), before it returns.
  void drop_connections();
  // Requests that matched, forwarded so far (every request is remembered).
  long long seen(const Match& match) const;

 private:
  struct Link;  // one client connection and its upstream one
  struct Rule {
    Match match;
    bool cut = false;
    std::chrono::milliseconds delay{0};
    int left = 0;
  };
  void run();
  void accept_client();
  // Moves bytes and applies faults on one connection; false when it closed.
  bool pump(Link& link, bool hole);
  void forward_requests(Link& link);
  void read_replies(Link& link);
  void wake();

  const int upstream_port_;
  int port_ = 0;
  int listen_fd_ = -1;
  int wake_fd_[2] = {-1, -1};

  mutable std::mutex mutex_;  // guards what the controls touch: below
  std::condition_variable dropped_;
  std::vector<Rule> rules_;
  std::vector<Argv> log_;  // every request forwarded
  bool hole_ = false;
  bool stop_ = false;
  std::uint64_t drops_asked_ = 0, drops_done_ = 0;

  std::vector<std::unique_ptr<Link>> links_;  // the thread's own
  std::thread thread_;
};

}  // namespace fault_test
