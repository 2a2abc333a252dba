// Weave's guarantees when a Redis reply comes late or a connection drops
// between the server's work and the client's read, through fault proxies
// (tests/support/fault_proxy.h) in front of real servers: one executable,
// run once per deployment (the environment's WEAVE_PROXIED_DEPLOYMENT:
// redis, the default, cluster or sentinel; tests/support/proxied_deployment.h).
//
// Every case asserts the guarantee.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cache_methods.h"
#include "dedupe_methods.h"
#include "proxied_deployment.h"
#include "weave/cache.h"
#include "weave/dedupe.h"
#include "weave/error.h"
#include "weave/lock.h"
#include "weave/queue.h"

using namespace std::chrono_literals;
using fault_test::Argv;
using fault_test::Match;
using fault_test::ProxiedDeployment;

namespace {

std::unique_ptr<ProxiedDeployment> make_deployment() {
  const char* chosen = std::getenv("WEAVE_PROXIED_DEPLOYMENT");
  const std::string which = chosen ? chosen : "redis";
  if (which == "redis") return std::make_unique<fault_test::ProxiedRedis>();
  if (which == "cluster") return std::make_unique<fault_test::ProxiedCluster>();
  if (which == "sentinel") return std::make_unique<fault_test::ProxiedSentinel>();
  throw std::invalid_argument("WEAVE_PROXIED_DEPLOYMENT=" + which + ": redis, cluster or sentinel");
}

// The executable's deployment, started on first use and shared by its cases
// (each uses keys of its own), with no fault left over from a case before.
ProxiedDeployment& deployment() {
  static const std::unique_ptr<ProxiedDeployment> d = make_deployment();
  d->clear_faults();
  return *d;
}

// A key other than `key` whose stored form (`stored(key)`) lives on the same
// server as `key`'s: calling it first leaves an idle pooled connection there
// (and the scripts loaded) for `key`'s call.
template <class Stored>
std::string key_beside(ProxiedDeployment& d, const std::string& key, Stored stored) {
  const int port = d.server_port(stored(key));
  for (int i = 0;; ++i) {
    std::string k = key + ":warm-up:" + std::to_string(i);
    if (d.server_port(stored(k)) == port) return k;
  }
}
std::string dedupe_key_beside(ProxiedDeployment& d, const std::string& key) {
  return key_beside(d, key, [](const std::string& k) { return "{weave:dedupe:" + k + "}"; });
}

// The outcome of a call as text: "ran", or the exception's type and message.
template <class F>
std::string outcome(F&& f) {
  try {
    f();
    return "ran";
  } catch (const weave::DuplicateInFlight& e) {
    return std::string("DuplicateInFlight: ") + e.what();
  } catch (const weave::TimeoutError& e) {
    return std::string("TimeoutError: ") + e.what();
  } catch (const std::exception& e) {
    return std::string("other error: ") + e.what();
  }
}

// Lines an event handler records. A handler given to configure_*() stays
// with the process-wide runtime after the case returns (a late reply or a
// reconnection still reports), so it owns what it writes: a shared EventLines,
// never a reference to the case's locals.
class EventLines {
 public:
  void add(std::string line) {
    std::lock_guard g(m_);
    lines_.push_back(std::move(line));
  }
  std::vector<std::string> lines() const {
    std::lock_guard g(m_);
    return lines_;
  }

 private:
  mutable std::mutex m_;
  std::vector<std::string> lines_;
};

bool has_arg(const Argv& argv, const std::string& exact) {
  for (std::size_t i = 1; i < argv.size(); ++i)
    if (argv[i] == exact) return true;
  return false;
}

// A message offered to queue `name` (5 s leases) and taken, with the
// connection of its `action` settle ("ack", "retry", ...) to be cut after
// the server ran it.
struct SettleToCut {
  std::optional<weave::Queue> queue;
  std::string id;
  std::optional<weave::QueueDelivery> delivery;
  Match settle;  // batch.lua's call with a "settle" request of `action`

  SettleToCut(ProxiedDeployment& d, const std::string& name, const std::string& action) {
    weave::configure_queues({.url = d.url(), .lease = std::chrono::seconds(5), .command_timeout = std::chrono::seconds(2)});
    queue.emplace(name);
    id = queue->offer_json(R"({"n":1})", std::chrono::milliseconds(0));
    delivery = queue->take_json(std::chrono::seconds(3));
    REQUIRE(delivery);
    settle = Match("EVALSHA", "", [tag = "{weave:queue:" + name + "}", action](const Argv& a) {
      return has_arg(a, tag) && has_arg(a, "settle") && has_arg(a, action);
    });
    d.cut_after_request(settle);
  }
};

}  // namespace

// "A dedupe key runs once" means once, not never. The claim (SET NX GET)
// ran on the server, its reply came after command_timeout: the caller gets
// a (retryable) TimeoutError, and its retry claims as the same owner
// (DedupeRuntime::owner_for), finds the first attempt's running claim its
// own and runs the method.
TEST_CASE("late replies: a dedupe claim answered after its timeout still lets the retry run once",
          "[redis][dedupe]") {
  ProxiedDeployment& d = deployment();
  weave::configure_dedupe({.url = d.url(), .command_timeout = 500ms});
  dedupe_test::Payments svc;
  const Match claim("SET", "{weave:dedupe:late:1}");
  d.delay_reply(claim, 1500ms);
  const std::string first = outcome([&] { svc.pay("late:1"); });
  INFO("first call: " << first);
  REQUIRE(first.rfind("TimeoutError", 0) == 0);
  REQUIRE(d.seen(claim) == 1);
  // The server applied the claim: a running record of the first attempt.
  REQUIRE(d.server("{weave:dedupe:late:1}").cmd({"GET", "{weave:dedupe:late:1}"}).str.rfind("r|", 0) == 0);

  const std::string retry = outcome([&] { svc.pay("late:1"); });
  INFO("retry: " << retry);
  CHECK(retry == "ran");
  CHECK(svc.runs == 1);
}

// The same without a timeout. The claim ran on the server and its
// connection (a reused pooled one) was closed before the reply was read: the
// store layer sends the claim once more on a new connection
// (NodeExecutor::command's resend after a reused connection closed), which
// finds the first send's running claim, its own owner's: the call runs.
TEST_CASE("late replies: a dedupe claim whose connection is cut after the server ran it still runs once",
          "[redis][dedupe]") {
  ProxiedDeployment& d = deployment();
  weave::configure_dedupe({.url = d.url(), .command_timeout = 2s});
  dedupe_test::Payments svc;
  svc.pay(dedupe_key_beside(d, "cut:1"));  // one pooled connection, idle: the next call reuses it
  const Match claim("SET", "{weave:dedupe:cut:1}");
  d.cut_after_request(claim);
  const std::string call = outcome([&] { svc.pay("cut:1"); });
  INFO("call: " << call);
  CHECK(call == "ran");
  CHECK(d.seen(claim) >= 1);
  CHECK(svc.runs == 2);  // warm-up and cut:1
}

// The finish script ran (the outcome is stored) and the connection closed
// before its answer: the store layer sends it again on a new connection, and
// the repeat finds the outcome its own claim wrote and answers as the first
// send did. (Before, it answered "not yours": the call was counted and
// reported as a lost claim although its outcome was stored.)
TEST_CASE("late replies: a dedupe finish whose connection is cut after the server ran it answers as its first send",
          "[redis][dedupe]") {
  ProxiedDeployment& d = deployment();
  auto lost_events = std::make_shared<std::atomic<int>>(0);  // the handler outlives the case
  weave::configure_dedupe({.url = d.url(),
                           .command_timeout = 2s,
                           .on_event = [lost_events](const weave::Event& e) {
                             if (e.kind == weave::EventKind::lease_lost) ++*lost_events;
                           }});
  dedupe_test::Payments svc;
  svc.pay(dedupe_key_beside(d, "cut:2"));  // one pooled connection, idle: the next call reuses it
  const auto lost_before = weave::dedupe_stats().claims_lost;
  // finish.lua's call: EVALSHA <sha> 2 <record> <record>:at ...
  const Match finish("EVALSHA", "", [](const Argv& a) { return has_arg(a, "{weave:dedupe:cut:2}:at"); });
  d.cut_after_request(finish);
  const std::string call = outcome([&] { svc.pay("cut:2"); });
  INFO("call: " << call);
  CHECK(call == "ran");
  CHECK(d.seen(finish) == 2);  // sent, cut after it ran, sent again
  CHECK(weave::dedupe_stats().claims_lost == lost_before);
  CHECK(*lost_events == 0);
  // The outcome is stored: the key's next call is refused as a duplicate (on_duplicate=fail).
  const std::string again = outcome([&] { svc.pay("cut:2"); });
  INFO("again: " << again);
  CHECK(again != "ran");
  CHECK(svc.runs == 2);  // warm-up and cut:2, once
}

// "A queued message is never lost" (delivered at least once). The take
// script ran on the server (the message is in flight under a delivery lease)
// but its reply came after command_timeout: the consumer got a TimeoutError.
// Its next take sends the same request id (RedisQueue::take_id), and
// batch.lua answers it with the message the first send leased, leased again:
// the handler runs, nothing is dead-lettered (retries=0 would kill it at the
// first lease's end otherwise).
TEST_CASE("late replies: a take answered after its timeout still delivers the message",
          "[redis][queue]") {
  ProxiedDeployment& d = deployment();
  weave::configure_queues({.url = d.url(), .lease = 1000ms, .retries = 0, .command_timeout = 500ms});
  weave::Queue q("late-take");
  const std::string id = q.offer_json(R"({"n":1})", 0ms);
  // batch.lua's call (EVALSHA <sha> <numkeys> <keys...> {base} wake count kind ...) with a "take" request.
  const Match take("EVALSHA", "", [](const Argv& a) {
    return has_arg(a, "{weave:queue:late-take}") && has_arg(a, "take");
  });
  d.delay_reply(take, 1500ms);
  const std::string first = outcome([&] { q.take_json(3s); });
  INFO("first take: " << first);
  REQUIRE(first.rfind("TimeoutError", 0) == 0);
  REQUIRE(d.seen(take) == 1);

  bool ran = false;
  if (auto d = q.take_json(4s)) {  // the lease (1 s) runs out within it
    ran = d->id() == id;
    d->ack();
  }
  const weave::MessageInfo info = q.inspect(id);
  const weave::QueueStats stats = q.stats();
  INFO("message state " << static_cast<int>(info.state) << ", failures " << info.failures << ", last error '"
                        << info.last_error << "'; dead " << stats.dead);
  CHECK(ran);
  CHECK(stats.dead == 0);
}

// A retry settle ran (the message is scheduled again) and the connection
// closed before its answer: the store layer sends it again, and the repeat
// finds the message marked as moved by its own token and answers as the
// first send did. (Before, it answered "taken back": retry() threw
// DeliveryLost for a retry that had happened.)
TEST_CASE("late replies: a retry whose connection is cut after the server ran it answers as its first send",
          "[redis][queue]") {
  ProxiedDeployment& d = deployment();
  SettleToCut t(d, "cut-retry", "retry");
  const std::string settled = outcome([&] { t.delivery->retry(200ms); });
  INFO("retry: " << settled);
  CHECK(settled == "ran");
  CHECK(d.seen(t.settle) == 2);  // sent, cut after it ran, sent again
  // Retried once, not failed: delivered again with no failure counted.
  auto again = t.queue->take_json(3s);
  REQUIRE(again);
  CHECK(again->id() == t.id);
  CHECK(again->failures() == 0);
  again->ack();
}

// "A lock never has two holders" as far as a forced unlock goes:
// `weave unlock --force` frees the holder it was asked to free, never one
// that acquired after it. The force_release script ran (A's lease freed),
// then B acquired the free key; the forced unlock's connection (a reused
// pooled one) closed before its reply was read, so the store layer sends it
// once more on a new connection: the request's id finds its first answer
// kept, and B's key stays. (Not with a timeout: a command that timed out is
// never resent, the store drops the connection; a reused connection that
// closes is.)
TEST_CASE("late replies: a forced unlock sent again after its connection closed never frees a newer holder",
          "[redis][lock]") {
  ProxiedDeployment& d = deployment();
  auto raw = d.server("{weave:lock:job}");
  weave::LockOptions o = redis_test::lock_options(d.url());
  o.command_timeout = 8s;  // the held reply below never times out
  weave::LockClient admin(o), a(o), b(o);
  weave::LeaseHandle held_by_a = a.acquire("job", {.ttl = 20s});
  REQUIRE(admin.lock_state("job"));  // admin's pool: one idle connection, reused by force_unlock
  // force_release.lua: EVALSHA <sha> 5 {L} {L}:fence {L}:readers {L}:readers:fence {L}:forced ...
  const Match force("EVALSHA", "", [](const Argv& a) { return has_arg(a, "{weave:lock:job}:forced"); });
  d.delay_reply(force, 6s);
  std::string forced;
  std::thread unlocker([&] {
    try {
      const weave::ForcedRelease r = admin.force_unlock("job");
      forced = "freed " + std::to_string(r.freed.size()) + (r.freed.empty() ? "" : ": " + r.freed.front().owner);
    } catch (const std::exception& e) {
      forced = std::string("error: ") + e.what();
    }
  });
  redis_test::wait_for([&] { return raw.cmd({"EXISTS", "{weave:lock:job}"}).integer == 0; }, "A's lease freed");
  weave::LeaseHandle held_by_b = b.acquire("job", {.ttl = 20s});
  REQUIRE(held_by_b);
  const std::string b_owner = held_by_b->owner_token();
  d.drop_connections();  // the forced unlock's reply is not read yet
  unlocker.join();
  INFO("force_unlock: " << forced << " (A was " << held_by_a->owner_token() << ", B is " << b_owner
                         << "); force_release sent " << d.seen(force) << " times");
  CHECK(raw.cmd({"GET", "{weave:lock:job}"}).str == b_owner);
}

// A server busy in a script for 3 s (below its busy-reply threshold, so it
// answers nothing rather than BUSY) must not hold a dedupe caller past its
// command timeout (500 ms here) on a warm connection: the claim is not sent
// again and nothing else waits on the server.
TEST_CASE("late replies: a dedupe call on a server busy in a script ends with TimeoutError after one command timeout",
          "[redis][dedupe]") {
  ProxiedDeployment& d = deployment();
  weave::configure_dedupe({.url = d.url(), .command_timeout = 500ms});
  dedupe_test::Payments svc;
  svc.pay(dedupe_key_beside(d, "busy:1"));  // a pooled connection to the server, warm
  std::thread busy([port = d.server_port("{weave:dedupe:busy:1}")] {
    redis_test::Raw spinner(port, 10s);
    spinner.cmd({"EVAL",
                 "local t = redis.call('TIME') local s = t[1] * 1000 + t[2] / 1000 "
                 "repeat local n = redis.call('TIME') until n[1] * 1000 + n[2] / 1000 - s > 3000",
                 "0"});
  });
  std::this_thread::sleep_for(200ms);  // the script runs
  const auto start = std::chrono::steady_clock::now();
  const std::string call = outcome([&] { svc.pay("busy:1"); });
  const auto waited = std::chrono::steady_clock::now() - start;
  busy.join();
  INFO("call: " << call);
  CHECK(call.rfind("TimeoutError", 0) == 0);
  CHECK(waited < 2000ms);  // one command timeout, not the script's 2.8 s left
  // Its retry, once the server is free, runs the method once.
  CHECK(outcome([&] { svc.pay("busy:1"); }) == "ran");
  CHECK(svc.runs == 2);
}

// A waiter's release channel is a wake-up, not a precondition: a server
// that confirms the waiter's SUBSCRIBE only after the command timeout (the
// proxy holds the subscription connection's replies 1.5 s) does not fail a
// call that may wait 10 s. The waiter goes on; the confirmation, when it
// comes, wakes it to look again, and it takes the lease the holder released
// meanwhile (a release published before the subscription took effect is not
// missed: the look after the confirmation sees the key free).
TEST_CASE("late replies: a lock waiter whose SUBSCRIBE is confirmed after the command timeout still takes the lease",
          "[redis][lock]") {
  ProxiedDeployment& d = deployment();
  weave::LockOptions holding = redis_test::lock_options(d.url());
  weave::LockOptions waiting = redis_test::lock_options(d.url());
  waiting.command_timeout = 300ms;
  weave::LockClient holder(holding), waiter(waiting);
  weave::LeaseHandle held = holder.acquire("slow-sub", {.ttl = 20s});
  REQUIRE(held);
  // SUBSCRIBE, or SSUBSCRIBE on a cluster (the holder never subscribes).
  const Match subscribe = Match::where([](const Argv& a) { return a[0] == "SUBSCRIBE" || a[0] == "SSUBSCRIBE"; });
  d.delay_reply(subscribe, 1500ms);
  std::thread releaser([&] {
    std::this_thread::sleep_for(700ms);
    held = weave::LeaseHandle();  // released while the waiter's subscription is unconfirmed
  });
  std::string got;
  try {
    weave::LeaseHandle mine = waiter.acquire("slow-sub", {.ttl = 5s, .wait = 10s});
    got = mine ? "acquired" : "not acquired";
  } catch (const std::exception& e) {
    got = std::string("error: ") + e.what();
  }
  releaser.join();
  INFO("waiter: " << got);
  CHECK(got == "acquired");
  CHECK(d.seen(subscribe) >= 1);
}

// A sync miss's fill claim ran on the server (the lease is the call's) but
// its answer came after command_timeout. The call does not fail (a cache
// call loads when the store does not answer), and its fill, which stores the
// value, also drops the lease its claim took: no other caller of the key
// waits for a lease nobody holds, and the value is shared at once.
TEST_CASE("late replies: a cache fill claim answered after its timeout leaves no lease behind once the call filled",
          "[redis][cache]") {
  ProxiedDeployment& d = deployment();
  auto errors = std::make_shared<EventLines>();  // cache_error events: "<key>: <cause>"
  weave::configure_cache({.url = d.url(),
                          .command_timeout = 500ms,
                          .on_event = [errors](const weave::Event& e) {
                            if (e.kind == weave::EventKind::cache_error)
                              errors->add(std::string(e.key) + ": " + std::string(e.cause));
                          }});
  cache_test::Catalog c;
  const std::string entry = "{weave:cache:late-fill:1}";
  const auto stored = [](const std::string& k) { return "{weave:cache:late-fill:" + k + "}"; };
  REQUIRE(c.find("late-fill", key_beside(d, "1", stored), cache_test::Find::sync));  // scripts loaded there
  // claim_fill.lua's call: EVALSHA <sha> 2 <entry> <entry>fill <token> <lease ms> <version>
  const Match claim("EVALSHA", "", [&](const Argv& a) {
    return a.size() > 4 && a[2] == "2" && a[3] == entry && a[4] == entry + "fill";
  });
  d.delay_reply(claim, 1500ms);
  const cache_test::Found found = c.find("late-fill", "1", cache_test::Find::sync);
  REQUIRE(found);
  CHECK(found->cents == 100);
  CHECK(c.finds == 2);  // the warm-up and this one
  CHECK(d.seen(claim) == 1);
  auto raw = d.server(entry);
  CHECK(raw.cmd({"EXISTS", entry}).integer == 1);
  CHECK(raw.cmd({"EXISTS", entry + "fill"}).integer == 0);
  const std::vector<std::string> told = errors->lines();
  REQUIRE(told.size() == 1);  // the claim's timeout, told with the cache's name and the key
  CHECK(told[0].rfind("late-fill/1: ", 0) == 0);
}

// A cache write ran (value stored, invalidation published by its script) and
// its connection (a reused pooled one) closed before the answer: the store
// layer sends it again, which stores the same value once more, and the call
// returns as after one send. The process reads the written value.
TEST_CASE("late replies: a cache put whose connection is cut after the server ran it stores the value and returns",
          "[redis][cache]") {
  ProxiedDeployment& d = deployment();
  weave::configure_cache({.url = d.url(), .command_timeout = 2s});
  cache_test::Catalog c;
  const std::string entry = "{weave:cache:cut-put:1}";
  REQUIRE(c.find("cut-put", "1"));  // loaded and filled: a pooled connection to its server, idle
  // put.lua's call: its keys start with the entry, its arguments hold the JSON.
  const Match put("EVALSHA", R"("cents":250)", [&](const Argv& a) { return has_arg(a, entry); });
  d.cut_after_request(put);
  const shop::Product saved = c.save("cut-put", shop::Product{"1", 250});
  CHECK(saved.cents == 250);
  CHECK(d.seen(put) == 2);  // sent, cut after it ran, sent again
  CHECK(d.server(entry).cmd({"GET", entry}).str.find(R"("cents":250)") != std::string::npos);
  const cache_test::Found read = c.find("cut-put", "1");
  REQUIRE(read);
  CHECK(read->cents == 250);
  CHECK(c.finds == 1);
}

// An ack ran (the message is gone) and its connection (a reused pooled one)
// closed before the answer: the store layer sends it again, which finds no
// message. Within the delivery's lease only the holder could have settled it
// (a cancel leaves a marker, answered "cancelled"), so the repeat is the
// ack's own first send: acknowledged, the lease not lost. (Before, the
// repeat answered "gone" and ack() threw DeliveryLost.)
TEST_CASE("late replies: an ack whose connection is cut after the server ran it answers as its first send",
          "[redis][queue]") {
  ProxiedDeployment& d = deployment();
  SettleToCut t(d, "cut-ack", "ack");
  const std::string acked = outcome([&] { t.delivery->ack(); });
  INFO("ack: " << acked << "; lost cause '" << t.delivery->lease().lost_cause() << "'");
  CHECK(acked == "ran");
  CHECK(d.seen(t.settle) == 2);  // sent, cut after it ran, sent again
  CHECK_FALSE(t.delivery->lease().lost());
  CHECK(t.queue->inspect(t.id).state == weave::MessageState::absent);
  CHECK(t.queue->stats().in_flight == 0);
}
