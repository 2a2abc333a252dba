// A woven method whose lock cannot be given back because Redis was killed or
// frozen while it ran: the method completed, so its
// result must not turn into a retryable error. Each case starts its own
// redis-server.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "jobs.weave.h"
#include "redis_server.h"
#include "weave/error.h"
#include "weave/lock.h"

using namespace std::chrono_literals;
using redis_test::RedisServer;

namespace {

struct Seen {
  weave::EventKind kind;
  std::string key, cause;
  bool release_failed_type, retryable;
};

// Locks on `server` through the process-wide client, remembering its events.
// The handler stays with the process-wide client after the case (a renewal or
// reconnection may still report), so it owns the list it writes.
class Configured {
 public:
  Configured(const RedisServer& server, weave::ReleaseFailurePolicy policy) {
    weave::LockOptions o = redis_test::lock_options(server.url());
    o.command_timeout = 300ms;  // a frozen server fails the release quickly
    o.connect_timeout = 300ms;
    o.release_failure_policy = policy;
    o.on_event = [log = log_](const weave::Event& e) {
      std::lock_guard g(log->mutex);
      log->events.push_back({e.kind, std::string(e.key), std::string(e.cause),
                             dynamic_cast<const weave::ReleaseFailed*>(&e.error) != nullptr, e.error.retryable()});
    };
    weave::configure_locks(o);
  }
  std::vector<Seen> seen() const {
    std::lock_guard g(log_->mutex);
    return log_->events;
  }

 private:
  struct Log {
    std::mutex mutex;
    std::vector<Seen> events;
  };
  std::shared_ptr<Log> log_ = std::make_shared<Log>();
};

}  // namespace

TEST_CASE("redis: Redis killed or frozen while a woven method runs: its result is returned, the failed release counted and reported",
          "[redis][release]") {
  RedisServer server;
  Configured config(server, weave::ReleaseFailurePolicy::report);
  weave::Woven<jobs::Jobs> svc;
  const std::uint64_t before = weave::default_lock_client().stats().release_failures;
  int result = 0;
  SECTION("killed (SIGKILL): the release cannot connect") {
    result = svc.run("killed", [&] {
      server.stop();
      return 42;
    });
  }
  SECTION("frozen (SIGSTOP): the release times out") {
    result = svc.run("frozen", [&] {
      ::kill(server.pid(), SIGSTOP);
      return 42;
    });
    ::kill(server.pid(), SIGCONT);
  }
  CHECK(result == 42);
  CHECK(weave::default_lock_client().stats().release_failures == before + 1);
  const auto events = config.seen();
  REQUIRE(events.size() == 1);
  CHECK(events[0].kind == weave::EventKind::release_failed);
  CHECK_THAT(events[0].key, Catch::Matchers::StartsWith("job:"));
  CHECK_FALSE(events[0].cause.empty());
  CHECK(events[0].release_failed_type);
  CHECK_FALSE(events[0].retryable);
}

TEST_CASE("redis: release_failure_policy=throw_error: Redis killed while a woven method runs throws ReleaseFailed, never retryable",
          "[redis][release]") {
  RedisServer server;
  Configured config(server, weave::ReleaseFailurePolicy::throw_error);
  weave::Woven<jobs::Jobs> svc;
  int runs = 0;
  try {
    svc.run("strict", [&] {
      ++runs;
      server.stop();
      return 1;
    });
    FAIL("no ReleaseFailed");
  } catch (const weave::ReleaseFailed& e) {
    CHECK(e.key() == "job:strict");
    CHECK_FALSE(e.retryable());  // a caller's `if (e.retryable()) retry();` does not run it twice
    CHECK_THAT(e.what(), Catch::Matchers::Contains("'job:strict'") && Catch::Matchers::Contains("completed"));
  }
  CHECK(runs == 1);
  CHECK(config.seen().size() == 1);  // reported too
}
