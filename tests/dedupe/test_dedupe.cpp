// [[dedupe]] behaviour every store passes (docs/dedupe.md). The store is the
// executable's (weave_add_store_suite): test_store_url() from
// tests/stores/<store>_store.cpp.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "dedupe_methods.h"
#include "user_payments.weave.h"
#include "weave/dedupe.h"
#include "dedupe/dedupe_runtime.h"
#include "dedupe/redis/claim_redis.h"
#include "weave/error.h"
#include "weave/event.h"
#include "weave/held_lease.h"

using dedupe_test::Guard;
using dedupe_test::Payments;
using namespace std::chrono_literals;

namespace {

std::string fresh_key(const std::string& what) {
  static std::atomic<int> n{0};
  return "k" + std::to_string(n.fetch_add(1)) + ":" + what;
}

void use_store(std::chrono::milliseconds claim_lease = 10s) {
  weave::configure_dedupe({.url = test_store_url(), .claim_lease = claim_lease});
}

// Holds the first call's body until open(). A failed REQUIRE on the way must
// not leave the test waiting for a body that never returns: an Opener made
// after the std::async future opens the gate at scope exit (before the
// future's destructor joins), and a second body (a duplicate that ran) does
// not wait.
class Gate {
 public:
  void enter() {
    if (entered_once_.exchange(true)) return;
    entered_.set_value();
    opened_.wait();
  }
  void wait_entered() { entered_future_.wait(); }
  void open() {
    if (!open_once_.exchange(true)) open_.set_value();
  }
  struct Opener {
    Gate& gate;
    ~Opener() { gate.open(); }
  };

 private:
  std::promise<void> entered_, open_;
  std::future<void> entered_future_ = entered_.get_future();
  std::shared_future<void> opened_ = open_.get_future().share();
  std::atomic<bool> entered_once_{false}, open_once_{false};
};

}  // namespace

TEST_CASE("dedupe: a duplicate within the window throws DuplicateCall, never retryable") {
  use_store();
  Payments p;
  const auto key = fresh_key("throw");
  p.pay(key);
  try {
    p.pay(key);
    FAIL("the duplicate ran");
  } catch (const weave::DuplicateCall& e) {
    REQUIRE_FALSE(e.retryable());
    REQUIRE(e.key() == key);
    REQUIRE(std::string(e.what()) == "already submitted");  // message=
  }
  REQUIRE(p.runs == 1);
  p.pay(fresh_key("other"));  // another key runs
  REQUIRE(p.runs == 2);
}

// ("a:b", "c") and ("a", "b:c") render "pay:<user>:<idempotency_key>" as two
// keys: one user is never handed another's stored result.
TEST_CASE("dedupe: calls whose arguments differ never share a record, however the arguments join") {
  use_store();
  weave::Woven<users::Payments> payments;
  const std::string a = fresh_key("split");
  CHECK(payments.pay(a + ":b", "c") == a + ":b|c");
  CHECK(payments.pay(a, "b:c") == a + "|b:c");
  CHECK(payments.runs == 2);
  CHECK(payments.pay(a, "b:c") == a + "|b:c");  // a duplicate of its own call: replayed
  CHECK(payments.runs == 2);
}

TEST_CASE("dedupe: on_duplicate=replay returns the first call's result") {
  use_store();
  Payments p;
  const auto key = fresh_key("replay");
  const shop::Receipt first = p.pay(key, Guard::replay);
  const shop::Receipt again = p.pay(key, Guard::replay);
  REQUIRE(again.id == first.id);
  REQUIRE(p.runs == 1);
  REQUIRE(weave::dedupe_stats().replays >= 1);
}

TEST_CASE("dedupe: on_duplicate=skip returns nothing for a duplicate") {
  use_store();
  Payments p;
  const auto key = fresh_key("skip");
  REQUIRE(p.pay_once(key));
  REQUIRE_FALSE(p.pay_once(key));
  REQUIRE(p.runs == 1);
}

TEST_CASE("dedupe: a first call that throws leaves no record, so a retry runs at once (on_error=forget)") {
  use_store();
  Payments p;
  const auto key = fresh_key("forget");
  p.body = [&](const std::string&) -> shop::Receipt {
    if (p.runs == 1) throw std::runtime_error("card declined");
    return {"ok", 1};
  };
  REQUIRE_THROWS_WITH(p.pay(key), "card declined");
  REQUIRE(p.pay(key).id == "ok");
  REQUIRE(p.runs == 2);
}

TEST_CASE("dedupe: on_error=remember answers duplicates with the first call's error") {
  use_store();
  Payments p;
  const auto key = fresh_key("remember");
  p.body = [](const std::string&) -> shop::Receipt { throw std::runtime_error("card declined"); };
  REQUIRE_THROWS_WITH(p.pay(key, Guard::remember), "card declined");
  try {
    p.pay(key, Guard::remember);
    FAIL("the duplicate ran");
  } catch (const weave::DuplicateCall& e) {
    REQUIRE_THAT(e.what(), Catch::Contains("card declined"));
  }
  REQUIRE(p.runs == 1);
}

TEST_CASE("dedupe: the same key with another match value is a DedupeMismatch, never a replay") {
  use_store();
  Payments p;
  const auto key = fresh_key("match");
  p.pay(key, Guard::replay, "order-1:100");
  REQUIRE_THROWS_AS(p.pay(key, Guard::replay, "order-1:999"), weave::DedupeMismatch);
  REQUIRE(p.pay(key, Guard::replay, "order-1:100").id == "r-1");
  REQUIRE(p.runs == 1);
}

TEST_CASE("dedupe: a duplicate of a running call is refused at once without wait=") {
  use_store();
  Payments p;
  const auto key = fresh_key("inflight");
  Gate gate;
  p.body = [&](const std::string&) -> shop::Receipt {
    gate.enter();
    return {"slow", 1};
  };
  auto first = std::async(std::launch::async, [&] { return p.pay(key, Guard::replay); });
  Gate::Opener opener{gate};
  gate.wait_entered();
  REQUIRE_THROWS_AS(p.pay(key, Guard::replay), weave::DuplicateInFlight);
  gate.open();
  REQUIRE(first.get().id == "slow");
}

TEST_CASE("dedupe: duplicates that wait get the running call's result, and it runs once") {
  use_store();
  Payments p;
  const auto key = fresh_key("wait");
  Gate gate;
  p.body = [&](const std::string&) -> shop::Receipt {
    gate.enter();
    return {"the-one", 42};
  };
  auto first = std::async(std::launch::async, [&] { return p.pay(key, Guard::replay_wait); });
  Gate::Opener opener{gate};
  gate.wait_entered();
  std::vector<std::future<shop::Receipt>> dups;
  for (int i = 0; i < 6; ++i) dups.push_back(std::async(std::launch::async, [&] { return p.pay(key, Guard::replay_wait); }));
  std::this_thread::sleep_for(50ms);
  gate.open();
  REQUIRE(first.get().id == "the-one");
  for (auto& d : dups) REQUIRE(d.get().id == "the-one");
  REQUIRE(p.runs == 1);
}

TEST_CASE("dedupe: after the window the key runs again") {
  use_store();
  Payments p;
  const auto key = fresh_key("window");
  p.pay(key, Guard::short_window);
  p.pay(key, Guard::short_window);
  REQUIRE(p.runs == 1);
  for (int i = 0; i < 100 && p.runs == 1; ++i) {
    std::this_thread::sleep_for(50ms);
    p.pay(key, Guard::short_window);
  }
  REQUIRE(p.runs == 2);
}

TEST_CASE("dedupe: a long first call keeps its claim past the claim lease (renewed while it runs)") {
  use_store(150ms);
  Payments p;
  const auto key = fresh_key("renewed");
  Gate gate;
  p.body = [&](const std::string&) -> shop::Receipt {
    gate.enter();
    return {"long", 1};
  };
  auto first = std::async(std::launch::async, [&] { return p.pay(key, Guard::replay); });
  Gate::Opener opener{gate};
  gate.wait_entered();
  std::this_thread::sleep_for(600ms);  // four claim leases
  REQUIRE_THROWS_AS(p.pay(key, Guard::replay), weave::DuplicateInFlight);
  gate.open();
  REQUIRE(first.get().id == "long");
  REQUIRE(p.pay(key, Guard::replay).id == "long");
  REQUIRE(p.runs == 1);
  REQUIRE(weave::dedupe_stats().claims_lost == 0);
}

TEST_CASE("dedupe: a result that cannot be stored fails the first call, and leaves no record") {
  use_store();
  Payments p;
  const auto key = fresh_key("unstorable");
  REQUIRE_THROWS_WITH(p.unstorable(key), Catch::Contains("cannot serialize"));
  REQUIRE_THROWS_WITH(p.unstorable(key), Catch::Contains("cannot serialize"));  // ran again: nothing recorded
  REQUIRE(p.runs == 2);
}

TEST_CASE("dedupe: a key written as text (weavegen's default: the qualified name) guards the method, and without a "
          "key the method's name does") {
  use_store();
  static const std::string text = fresh_key("shop::Payments::by_text");
  static const std::string method = fresh_key("shop::Payments::no_key");
  static const weave::ArgSpec by_text[] = {{"key", weave::ArgValue::of_text(text)}};
  static const weave::AnnotationSpec by_text_spec[] = {{"dedupe", 0, by_text, 1, 1}};
  static const weave::AnnotationSpec no_key_spec[] = {{"dedupe", 0, {}, 2, 1}};
  static const weave::MethodInfo infos[] = {{"shop::Payments::by_text", "payments.h", 1, by_text_spec, {}},
                                            {method, "payments.h", 2, no_key_spec, {}}};
  for (const weave::MethodInfo& info : infos) {
    INFO(info.qualified_name);
    int runs = 0;
    auto call = [&](const std::string& arg) {
      const weave::ArgRef args[] = {weave::ArgRef(arg)};
      weave::detail::invoke<void>(info, args, {}, [&] { ++runs; }, weave::detail::CannotSkip{});
    };
    call("a");
    try {
      call("b");  // another argument, the same key
      FAIL("the duplicate ran");
    } catch (const weave::DuplicateCall& e) {
      CHECK(e.key() == (&info == &infos[0] ? text : method));
    }
    CHECK(runs == 1);
  }
}

TEST_CASE("dedupe: bad input is a typed error naming the key or the method") {
  use_store();
  Payments p;
  REQUIRE_THROWS_AS(p.pay(""), weave::UsageError);
  REQUIRE_THROWS_WITH(p.pay(std::string(5000, 'x')), Catch::Contains("max_key_bytes"));
  REQUIRE_THROWS_AS(p.pay(std::string(5000, 'x')), weave::ConfigError);
  REQUIRE_THROWS_WITH(p.pay(fresh_key("w0"), Guard::zero_window), Catch::Contains("window 0ms"));
  const std::string binary("a\0b\xff|c", 6);
  p.pay(binary);
  REQUIRE_THROWS_AS(p.pay(binary), weave::DuplicateCall);
  REQUIRE(p.runs == 1);
}

// mem:// keeps records decoded: no record of a foreign shape can exist there.
TEST_CASE("dedupe: a record of an unknown shape (another version) answers with a clear DuplicateCall", "[redis]") {
  use_store();
  Payments p;
  const auto key = fresh_key("shape");
  write_raw("{weave:dedupe:" + key + "}", "v2:{\"receipt\":1}");
  REQUIRE_THROWS_WITH(p.pay(key), Catch::Contains("unknown shape"));
  REQUIRE(p.runs == 0);
}

TEST_CASE("dedupe: the body sees its own claim as current_dedupe_claim(), the enclosing one by key, none outside") {
  use_store();
  REQUIRE(weave::current_dedupe_claim() == nullptr);
  Payments outer, inner;
  const auto outer_key = fresh_key("claim-outer"), inner_key = fresh_key("claim-inner");
  std::shared_ptr<const weave::DedupeClaim> kept;
  inner.body = [&](const std::string&) -> shop::Receipt {
    const weave::DedupeClaim* c = weave::current_dedupe_claim();
    REQUIRE(c != nullptr);
    REQUIRE(c->key() == inner_key);
    REQUIRE(weave::current_dedupe_claim(inner_key) == c);
    const weave::DedupeClaim* o = weave::current_dedupe_claim(outer_key);
    REQUIRE(o != nullptr);
    REQUIRE(o != c);
    REQUIRE(o->key() == outer_key);
    REQUIRE(o->owner_token() != c->owner_token());
    return {"inner", 1};
  };
  outer.body = [&](const std::string&) -> shop::Receipt {
    const weave::DedupeClaim* c = weave::current_dedupe_claim();
    REQUIRE(c != nullptr);
    REQUIRE(c->key() == outer_key);
    REQUIRE_FALSE(c->owner_token().empty());
    REQUIRE_FALSE(c->lost());
    REQUIRE_FALSE(c->stop_token().stop_requested());
    REQUIRE(c->lost_cause().empty());
    REQUIRE(c->expires_at() > weave::DedupeClaim::clock::now());
    REQUIRE(weave::current_dedupe_claim("no such key") == nullptr);
    kept = c->share();
    REQUIRE(inner.pay(inner_key).id == "inner");
    REQUIRE(weave::current_dedupe_claim() == c);  // the inner call's scope ended
    return {"outer", 1};
  };
  REQUIRE(outer.pay(outer_key).id == "outer");
  REQUIRE(weave::current_dedupe_claim() == nullptr);
  REQUIRE(kept);
  REQUIRE(kept->key() == outer_key);
  REQUIRE_FALSE(kept->lost());  // finished normally
}

TEST_CASE("dedupe: another thread working for the call gets the claim through share()") {
  use_store();
  Payments p;
  const auto key = fresh_key("claim-thread");
  p.body = [&](const std::string&) -> shop::Receipt {
    std::shared_ptr<const weave::DedupeClaim> claim = weave::current_dedupe_claim()->share();
    std::string seen;
    std::thread([&] {
      // Thread-local: not carried to another thread by itself.
      seen = weave::current_dedupe_claim() ? "a claim here" : claim->lost() ? "lost" : claim->key();
    }).join();
    return {seen, 1};
  };
  REQUIRE(p.pay(key).id == key);
}

// mem:// records cannot be changed from outside the claim store.
TEST_CASE("dedupe: a claim taken away while the body runs fires its stop token, and the outcome is not recorded", "[redis]") {
  // Reported as every feature's lost lease is: lease_lost, a LeaseLost naming the key.
  struct Seen {
    std::mutex mutex;
    std::vector<std::string> events;
  };
  auto seen = std::make_shared<Seen>();
  weave::configure_dedupe({.url = test_store_url(), .claim_lease = 150ms,  // renewed every 50 ms
                           .on_event = [seen](const weave::Event& e) {
                             const bool typed = dynamic_cast<const weave::LeaseLost*>(&e.error) != nullptr;
                             std::lock_guard g(seen->mutex);
                             seen->events.push_back(std::string(weave::to_string(e.kind)) + " " +
                                                    std::string(e.feature) + " " + std::string(e.key) + " " +
                                                    (typed ? "LeaseLost" : "untyped") + " " +
                                                    (e.held_lease && e.held_lease->key() == e.key ? "held" : "no-lease"));
                           }});
  Payments p;
  const auto key = fresh_key("claim-taken");
  const auto lost_before = weave::dedupe_stats().claims_lost;
  std::promise<void> entered;
  bool fired = false, lost = false;
  std::string cause;
  p.body = [&](const std::string&) -> shop::Receipt {
    const weave::HeldLease* c = weave::current_dedupe_claim();  // the view every feature's lease gives
    const std::stop_token token = c->stop_token();
    entered.set_value();
    for (int i = 0; i < 1000 && !token.stop_requested(); ++i) std::this_thread::sleep_for(10ms);
    fired = token.stop_requested();
    lost = c->lost();
    cause = c->lost_cause();
    return {"late", 1};
  };
  auto first = std::async(std::launch::async, [&] { return p.pay(key, Guard::replay); });
  entered.get_future().wait();
  write_raw("{weave:dedupe:" + key + "}", "r|0|someone-else");  // another owner's running claim
  REQUIRE(first.get().id == "late");  // the call ran: its caller gets its result
  REQUIRE(fired);
  REQUIRE(lost);
  REQUIRE_THAT(cause, Catch::Contains("renewal found the claim gone"));
  REQUIRE(weave::dedupe_stats().claims_lost == lost_before + 1);
  std::vector<std::string> events;
  for (int i = 0; i < 500 && events.empty(); ++i) {  // (the renewer's notifier thread may be the one to tell)
    if (i) std::this_thread::sleep_for(10ms);
    std::lock_guard g(seen->mutex);
    events = seen->events;
  }
  REQUIRE(events == std::vector<std::string>{"lease_lost dedupe " + key + " LeaseLost held"});
  REQUIRE_THROWS_AS(p.pay(key, Guard::replay), weave::DuplicateInFlight);  // the other owner's claim, not "late"
  REQUIRE(p.runs == 1);
}

// Both ways a claim reaches Redis: SET NX GET (Redis 7), and the claim script
// a server before 7.0 gets; one answer.
TEST_CASE("dedupe: the claim store answers the same through SET NX GET and through the claim script", "[redis]") {
  for (bool by_script : {false, true}) {
    INFO("claim by script: " << by_script);
    weave::DedupeOptions o;
    o.url = test_store_url();
    auto store = weave::detail::make_redis_claims(o, by_script);
    const auto key = fresh_key(by_script ? "store-script" : "store-set");
    const auto first = store->claim(key, "owner-1", "m", 10s);
    REQUIRE(first.claimed);
    const auto second = store->claim(key, "owner-2", "m", 10s);
    REQUIRE_FALSE(second.claimed);
    REQUIRE(second.readable);
    REQUIRE(second.existing.kind == 'r');
    REQUIRE(second.existing.match == "m");
    REQUIRE(second.existing.rest == "owner-1");
    const auto ttl = second.ttl_left > 0ms ? second.ttl_left : store->ttl_left(key);
    REQUIRE(ttl > 0ms);
    REQUIRE(ttl <= 10s);
    REQUIRE_FALSE(store->finish(key, "owner-2", "m", {'d', "m", "{}"}, 60s));  // not its claim
    REQUIRE(store->finish(key, "owner-1", "m", {'d', "m", "{\"id\":1}"}, 60s));
    const auto third = store->claim(key, "owner-3", "m", 10s);
    REQUIRE_FALSE(third.claimed);
    REQUIRE(third.existing.kind == 'd');
    REQUIRE(third.existing.rest == "{\"id\":1}");
    REQUIRE(store->ttl_left(fresh_key("absent")) == 1ms);  // gone: look again soon
  }
}

// The deadline check itself, without a store or a renewer (once: mem:// only).
TEST_CASE("dedupe: a claim past its local deadline is lost at the first lost() or stop_token(), renewer or not", "[mem]") {
  using Clock = std::chrono::steady_clock;
  weave::detail::DedupeSeries& series = weave::detail::dedupe_series("k");
  auto fresh = std::make_shared<weave::detail::HeldClaim>("k", "owner", "", 10s, Clock::now(), /*in_process=*/true, series,
                                                         /*runtime=*/nullptr);
  REQUIRE_FALSE(fresh->lost());
  REQUIRE_FALSE(fresh->stop_token().stop_requested());

  // Sent two leases ago and never renewed: what a process resuming from SIGSTOP holds.
  auto paused = std::make_shared<weave::detail::HeldClaim>("k", "owner", "", 100ms, Clock::now() - 200ms, /*in_process=*/true, series,
                                                         /*runtime=*/nullptr);
  const weave::DedupeClaim& claim = *paused;
  REQUIRE(claim.stop_token().stop_requested());  // checked before the token is handed out
  REQUIRE(claim.lost());
  REQUIRE_THAT(claim.lost_cause(), Catch::Contains("ran out before it was renewed"));

  // A token taken while the claim was live fires when its deadline is seen passed.
  auto live = std::make_shared<weave::detail::HeldClaim>("k", "owner", "", 10s, Clock::now(), /*in_process=*/true, series,
                                                         /*runtime=*/nullptr);
  const std::stop_token kept = live->stop_token();
  REQUIRE_FALSE(kept.stop_requested());
  REQUIRE(live->check_deadlines(Clock::now() + 11s));  // the check lost() makes, 11 s on (no renewer knows this claim)
  REQUIRE(kept.stop_requested());
  REQUIRE(live->lost());
}
