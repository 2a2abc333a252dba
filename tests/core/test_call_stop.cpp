// The running call's stop token (src/core/call_stop.h): a deadline is armed
// only when someone asks for the token, disarmed when its scope ends in
// time, and a token made of several follows each of them.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "core/call_stop.h"
#include "weave/call_context.h"
#include "weave/timeout.h"

using namespace std::chrono_literals;
using weave::detail::DeadlineTimer;

TEST_CASE("call stop: a deadline nobody asked about arms nothing, one asked about is disarmed in time", "[core]") {
  const std::size_t before = DeadlineTimer::instance().size();
  weave::timeout(10s, [&] { CHECK(DeadlineTimer::instance().size() == before); });
  weave::timeout(10s, [&] {
    const std::stop_token t = weave::current_stop_token();
    CHECK(t.stop_possible());
    CHECK(DeadlineTimer::instance().size() == before + 1);
    CHECK(weave::current_stop_token() == t);  // asked again: the same
  });
  CHECK(DeadlineTimer::instance().size() == before);
}

TEST_CASE("call stop: a context captured inside a deadline scope carries its token to another thread", "[core]") {
  std::stop_token seen;
  weave::timeout(10s, [&] {
    const weave::CallContext ctx = weave::CallContext::capture();
    std::thread([&] {
      const weave::CallContext::Scope in(ctx);
      seen = weave::current_stop_token();
    }).join();
    CHECK(seen.stop_possible());
    CHECK(seen == weave::current_stop_token());
  });
  CHECK_FALSE(seen.stop_possible());  // its scope ended in time: it can no longer fire
}

TEST_CASE("call stop: a join stops when any token it follows does", "[core]") {
  std::stop_source a, b;
  weave::detail::StopJoin join;
  join.follow(a.get_token());
  join.follow(b.get_token());
  join.follow(std::stop_token{});  // one that never stops: not followed
  CHECK_FALSE(join.token().stop_requested());
  b.request_stop();
  CHECK(join.token().stop_requested());

  std::stop_source stopped;
  stopped.request_stop();
  weave::detail::StopJoin late;
  late.follow(stopped.get_token());  // already stopped: at once
  CHECK(late.token().stop_requested());
}
