// The one event hook (weave/event.h): where events go, and the default
// handler's line on stderr.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/events.h"
#include "weave/error.h"
#include "weave/event.h"

namespace {

using namespace std::chrono_literals;

// Everything written to fd 2 while it lives (a pipe in its place).
class StderrCapture {
 public:
  StderrCapture() {
    REQUIRE(::pipe(pipe_) == 0);
    ::fcntl(pipe_[0], F_SETFL, O_NONBLOCK);
    saved_ = ::dup(STDERR_FILENO);
    ::dup2(pipe_[1], STDERR_FILENO);
  }
  ~StderrCapture() {
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    ::close(pipe_[0]);
    ::close(pipe_[1]);
  }
  std::vector<std::string> lines() {
    char buf[4096];
    for (ssize_t n; (n = ::read(pipe_[0], buf, sizeof buf)) > 0;) text_.append(buf, static_cast<std::size_t>(n));
    std::vector<std::string> out;
    std::size_t at = 0;
    for (std::size_t nl; (nl = text_.find('\n', at)) != std::string::npos; at = nl + 1)
      out.push_back(text_.substr(at, nl - at));
    return out;
  }

 private:
  int pipe_[2]{-1, -1};
  int saved_ = -1;
  std::string text_;
};

// Puts the default handler back however a case ends.
struct DefaultHandlerAfter {
  ~DefaultHandlerAfter() { weave::set_event_handler(weave::write_event_to_stderr); }
};

}  // namespace

TEST_CASE("events: the default handler writes one line per event to stderr, its level first", "[core][events]") {
  DefaultHandlerAfter restore;
  weave::set_event_handler(weave::write_event_to_stderr);
  StderrCapture err;
  weave::detail::emit_notice(weave::EventKind::reconnected, "store", "127.0.0.1:7001",
                             "connected again (the last\nconnection failed)");
  weave::detail::emit_notice(weave::EventKind::dead_lettered, "queue", "orders/o-1", "dead-lettered: boom");
  const auto lines = err.lines();
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "weave: info: store \"127.0.0.1:7001\": reconnected: connected again (the last connection failed)");
  CHECK(lines[1] == "weave: error: queue \"orders/o-1\": dead_lettered: dead-lettered: boom");
}

TEST_CASE("events: every kind has a documented level and a name", "[core][events]") {
  using K = weave::EventKind;
  using L = weave::EventLevel;
  const std::pair<K, L> kinds[] = {{K::release_failed, L::warning}, {K::lease_lost, L::error},
                                   {K::cache_error, L::warning},    {K::dedupe_error, L::error},
                                   {K::renewal_failed, L::warning}, {K::reconnected, L::info},
                                   {K::failover_followed, L::warning}, {K::feed_gap, L::warning},
                                   {K::dead_lettered, L::error},    {K::quota_error, L::warning},
                                   {K::circuit_opened, L::warning}, {K::circuit_half_open, L::info},
                                   {K::circuit_closed, L::info}};
  for (const auto& [kind, level] : kinds) {
    CHECK(weave::level_of(kind) == level);
    CHECK(weave::to_string(kind) != "unknown");
  }
}

TEST_CASE("events: the default handler writes every kind, the last ones too", "[core][events]") {
  DefaultHandlerAfter restore;
  weave::set_event_handler(weave::write_event_to_stderr);
  StderrCapture err;
  weave::detail::emit_notice(weave::EventKind::quota_error, "quota", "api:1", "store down: let through");
  weave::detail::emit_notice(weave::EventKind::circuit_closed, "circuit_breaker", "psp", "its probes passed");
  const auto lines = err.lines();
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "weave: warning: quota \"api:1\": quota_error: store down: let through");
  CHECK(lines[1] == "weave: info: circuit_breaker \"psp\": circuit_closed: its probes passed");
}

TEST_CASE("events: the default handler writes at most 10 lines a second of a kind and then says how many it left out",
          "[core][events]") {
  DefaultHandlerAfter restore;
  weave::set_event_handler(weave::write_event_to_stderr);
  std::this_thread::sleep_for(1100ms);  // a fresh second for this kind
  StderrCapture err;
  for (int i = 0; i < 25; ++i)
    weave::detail::emit_notice(weave::EventKind::feed_gap, "cache", "", "down " + std::to_string(i));
  weave::detail::emit_notice(weave::EventKind::reconnected, "store", "n", "another kind has its own budget");
  auto lines = err.lines();
  REQUIRE(lines.size() == 11);
  CHECK_THAT(lines[9], Catch::EndsWith("down 9"));
  CHECK_THAT(lines[10], Catch::Contains("reconnected"));
  std::this_thread::sleep_for(1100ms);
  weave::detail::emit_notice(weave::EventKind::feed_gap, "cache", "", "down again");
  lines = err.lines();
  REQUIRE(lines.size() == 12);
  CHECK_THAT(lines[11], Catch::EndsWith("down again (15 more feed_gap left out before)"));
}

TEST_CASE("events: set_event_handler replaces the default, an empty one drops every event, and a feature's own hook "
          "comes first",
          "[core][events]") {
  DefaultHandlerAfter restore;
  std::mutex m;
  std::vector<std::string> seen;
  StderrCapture err;
  weave::set_event_handler([&](const weave::Event& e) {
    std::lock_guard g(m);
    seen.push_back(std::string(weave::to_string(e.kind)) + " " + std::string(e.key) + " " + e.error.key());
  });
  weave::detail::emit_notice(weave::EventKind::failover_followed, "store", "127.0.0.1:7002", "master moved");
  weave::EventHook own = [&](const weave::Event& e) {
    std::lock_guard g(m);
    seen.push_back("own " + std::string(e.key));
  };
  weave::detail::emit_notice(own, weave::EventKind::renewal_failed, "lock", "k", "renewal failed");
  weave::set_event_handler({});
  weave::detail::emit_notice(weave::EventKind::reconnected, "store", "dropped", "nobody hears this");
  // A throwing handler is dropped, not propagated.
  weave::set_event_handler([](const weave::Event&) { throw std::runtime_error("handler bug"); });
  CHECK_NOTHROW(weave::detail::emit_notice(weave::EventKind::reconnected, "store", "x", "y"));
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == "failover_followed 127.0.0.1:7002 127.0.0.1:7002");
  CHECK(seen[1] == "own k");
  CHECK(err.lines().empty());
}
