// The error tree's typed fields: what a caller decides on without parsing what().
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <type_traits>

#include "weave/error.h"

TEST_CASE("ReplyError keeps the server's code and text apart from its message") {
  const weave::ReplyError moved("weave redis: subscribe refused", "MOVED 5168 127.0.0.1:7001");
  CHECK(moved.code() == "MOVED");
  CHECK(moved.reply() == "MOVED 5168 127.0.0.1:7001");  // what a redirect is read from
  CHECK(std::string(moved.what()) == "weave redis: subscribe refused: MOVED 5168 127.0.0.1:7001");
  CHECK_FALSE(moved.retryable());
  const weave::ReplyError loading("weave redis: acquire refused", "LOADING Redis is loading the dataset");
  CHECK(loading.code() == "LOADING");
  CHECK(loading.retryable());
}

TEST_CASE("the error tree: a refused duplicate is a DedupeError, never a LockBusy, and retryable() follows docs/errors.md") {
  using namespace std::chrono_literals;
  static_assert(std::is_base_of_v<weave::DedupeError, weave::DuplicateCall>);
  static_assert(std::is_base_of_v<weave::DuplicateCall, weave::DuplicateInFlight>);
  static_assert(std::is_base_of_v<weave::DedupeError, weave::DedupeMismatch>);
  static_assert(!std::is_base_of_v<weave::LockBusy, weave::DuplicateCall>);
  static_assert(!std::is_base_of_v<weave::LockError, weave::DedupeError>);

  // A caller that retries every LockBusy must never catch a duplicate.
  auto caught_as_busy = [](auto thrown) {
    try {
      throw thrown;
    } catch (const weave::LockBusy&) {
      return true;
    } catch (const weave::Error&) {
      return false;
    }
  };
  CHECK(caught_as_busy(weave::LockBusy("k", 5ms)));
  CHECK_FALSE(caught_as_busy(weave::DuplicateCall("k", 5ms)));
  CHECK_FALSE(caught_as_busy(weave::DuplicateInFlight("k", 5ms)));

  struct Row {
    const weave::Error& e;
    bool retryable;
    const char* key;
  };
  const weave::LockBusy busy("lk", 10ms);
  const weave::LeaseLost lost("lk", "ran out");
  const weave::ReleaseFailed release("lk", "timeout");
  const weave::DuplicateCall dup("dk", "weave: duplicate call refused: already submitted");
  const weave::DuplicateCall guard("lk", 3ms);  // a release=on_expiry lock
  const weave::DuplicateInFlight in_flight("dk", 7ms);
  const weave::DedupeMismatch mismatch("dk", "a", "b");
  const weave::IoError io("weave redis: connection reset");
  const weave::TimeoutError timeout("weave redis: no answer in 1000 ms");
  const weave::ConfigError config("bad url");
  const Row rows[] = {{busy, true, "lk"},      {lost, false, "lk"},    {release, false, "lk"},
                      {dup, false, "dk"},      {guard, false, "lk"},   {in_flight, false, "dk"},
                      {mismatch, false, "dk"}, {io, true, ""},         {timeout, true, ""},
                      {config, false, ""}};
  for (const Row& r : rows) {
    INFO(r.e.what());
    CHECK(r.e.retryable() == r.retryable);
    CHECK(r.e.key() == r.key);
  }
  CHECK(in_flight.waited() == 7ms);
  CHECK(guard.waited() == 3ms);
}

TEST_CASE("name_key names a dedupe key in what() and key() of a store error") {
  weave::TimeoutError e("weave redis: no answer in 1000 ms");
  weave::detail::name_key(e, "pay:o-1", "dedupe key");
  CHECK(e.key() == "pay:o-1");
  CHECK(std::string(e.what()) == "weave redis: no answer in 1000 ms (dedupe key 'pay:o-1')");
  CHECK(e.retryable());
  weave::detail::name_key(e, "other");  // the innermost key wins
  CHECK(e.key() == "pay:o-1");
}
