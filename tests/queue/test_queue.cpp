// Delay-queue behaviour every store passes (docs/queue.md). The store is the
// executable's (weave_add_store_suite): test_store_url() from
// tests/stores/<store>_store.cpp. Redis stores also run the
// multi-process cases (fork, SIGKILL, SIGSTOP) and count the commands an
// idle consumer sends.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <future>
#include <mutex>
#include <optional>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "event_recorder.h"
#include "faketime.h"
#include "forked_child.h"
#include "weave/error.h"
#include "weave/event.h"
#include "store/open.h"
#include "queue/queue_runtime.h"
#include "store/reply.h"
#include "weave/queue.h"

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

struct Order {
  std::string id;
  int cents = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Order, id, cents)

// A fresh queue name per test: the store outlives each test.
std::string fresh_queue(const std::string& what) {
  static std::atomic<int> n{0};
  return "q" + std::to_string(::getpid()) + "-" + std::to_string(n.fetch_add(1)) + "-" + what;
}

void use_store(std::chrono::milliseconds lease = 30s, int retries = 3, std::chrono::milliseconds backoff = 20ms) {
  weave::QueueOptions o;
  o.url = test_store_url();
  o.lease = lease;
  o.retries = retries;
  o.backoff = backoff;
  o.backoff_cap = 1s;
  weave::configure_queues(o);
}

// One byte from a fork()ed child: it got as far as it says ('y': it holds a delivery).
class ChildSignal {
 public:
  ChildSignal() {
    if (::pipe(fds_) != 0) throw std::runtime_error("pipe failed");
  }
  void send(char c) {  // in the child
    ::close(fds_[0]);
    (void)!::write(fds_[1], &c, 1);
  }
  char receive() {  // in the parent
    ::close(fds_[1]);
    char c = 0;
    if (::read(fds_[0], &c, 1) != 1) c = 0;
    ::close(fds_[0]);
    return c;
  }

 private:
  int fds_[2];
};

// Orders "first" and "third" with, between them, a payload that does not
// decode as an Order; returns the bad one's id.
std::string offer_with_undecodable(const std::string& name) {
  weave::DelayQueue<Order> q(name);
  q.offer(Order{"first", 1}, 0ms);
  const std::string bad = weave::Queue(name).offer_json(R"({"cents": "not a number"})", 0ms);
  q.offer(Order{"third", 3}, 0ms);
  return bad;
}

// Takes and acks every ready message, expecting ids "0", "1", ... in order;
// returns how many came out of that order (`taken`: how many came at all).
int taken_out_of_order(weave::Queue& q, int& taken) {
  int out_of_order = 0;
  taken = 0;
  for (auto batch = q.take_many_json(1000, 1s); !batch.empty(); batch = q.ack_and_take_many(batch, 1000, 0ms))
    for (const auto& d : batch) out_of_order += d.id() != std::to_string(taken++);
  return out_of_order;
}

bool same(const weave::QueueStats& s, std::uint64_t delayed, std::uint64_t ready, std::uint64_t in_flight,
          std::uint64_t dead) {
  return s.delayed == delayed && s.ready == ready && s.in_flight == in_flight && s.dead == dead;
}

}  // namespace

TEST_CASE("queue: a message is delivered once due, never before, and an ack removes it", "[queue]") {
  use_store();
  weave::DelayQueue<Order> q(fresh_queue("due"));
  const auto offered = Clock::now();
  const std::string id = q.offer(Order{"o-1", 250}, 300ms);
  CHECK_FALSE(id.empty());
  CHECK_FALSE(q.take(0ms));  // not due yet
  auto d = q.take(10s);
  const auto taken = Clock::now();
  REQUIRE(d);
  CHECK(taken - offered >= 298ms);  // the store's clock, in whole ms
  CHECK(d->id() == id);
  CHECK(d->value().id == "o-1");
  CHECK(d->value().cents == 250);
  CHECK(d->attempt() == 1);
  CHECK(d->failures() == 0);
  CHECK(d->lateness() >= 0ms);
  CHECK(same(q.stats(), 0, 0, 1, 0));
  d->ack();
  CHECK(d->settled());
  CHECK(same(q.stats(), 0, 0, 0, 0));
  CHECK(q.inspect(id).state == weave::MessageState::absent);
  CHECK_THROWS_AS(d->ack(), weave::UsageError);  // settled once
}

TEST_CASE("queue: messages due together come out in offer order", "[queue]") {
  use_store();
  weave::DelayQueue<Order> q(fresh_queue("order"));
  std::vector<std::string> ids;
  for (int i = 0; i < 40; ++i) ids.push_back(q.offer(Order{"o", i}, 100ms));
  std::vector<std::string> got;
  while (got.size() < ids.size()) {
    auto d = q.take(5s);
    REQUIRE(d);
    got.push_back(d->id());
    d->ack();
  }
  CHECK(got == ids);
}

TEST_CASE("queue: an id queued twice is one message, and free again once acknowledged", "[queue]") {
  use_store();
  weave::DelayQueue<Order> q(fresh_queue("id"));
  CHECK(q.offer(Order{"a", 1}, 0ms, {.id = "order-7"}) == "order-7");
  CHECK(q.offer(Order{"b", 2}, 0ms, {.id = "order-7"}) == "order-7");
  CHECK(same(q.stats(), 0, 1, 0, 0));
  auto d = q.take(1s);
  REQUIRE(d);
  CHECK(d->value().id == "a");  // the first offer's payload stays
  CHECK(q.offer(Order{"c", 3}, 0ms, {.id = "order-7"}) == "order-7");  // in flight: still queued
  CHECK(same(q.stats(), 0, 0, 1, 0));
  d->ack();
  q.offer(Order{"d", 4}, 0ms, {.id = "order-7"});
  auto again = q.take(1s);
  REQUIRE(again);
  CHECK(again->value().id == "d");
  again->ack();
}

TEST_CASE("queue: offer_many queues each message with its own delay and id, in order, and a bad one queues none", "[queue]") {
  use_store();
  weave::DelayQueue<Order> q(fresh_queue("many"));
  CHECK(q.offer_many({}).empty());
  std::vector<weave::Offer<Order>> batch;
  for (int i = 0; i < 300; ++i) batch.push_back({Order{"o", i}, 0ms, {.id = "m-" + std::to_string(i)}});
  batch.push_back({Order{"late", 0}, 1h});                 // its own delay, a generated id
  batch.push_back({Order{"again", 0}, 0ms, {.id = "m-7"}});  // an id queued already: one message
  const std::vector<std::string> ids = q.offer_many(batch);
  REQUIRE(ids.size() == batch.size());
  CHECK(ids[0] == "m-0");
  CHECK_FALSE(ids[300].empty());
  CHECK(ids[301] == "m-7");
  CHECK(same(q.stats(), 1, 300, 0, 0));
  for (int i = 0; i < 300; ++i) {  // due together: offer order
    auto d = q.take(1s);
    REQUIRE(d);
    CHECK(d->id() == "m-" + std::to_string(i));
    CHECK(d->value().cents == i);
    d->ack();
  }
  CHECK(q.inspect(ids[300]).state == weave::MessageState::scheduled);
  std::vector<weave::Offer<Order>> bad{{Order{"fine", 1}, 0ms}, {Order{"bad", 2}, -1ms}};
  CHECK_THROWS_WITH(q.offer_many(bad), Catch::Contains("offer_many's message 1") && Catch::Contains("negative"));
  CHECK(same(q.stats(), 1, 0, 0, 0));  // not even the good one
}

TEST_CASE("queue: stats count each state exactly", "[queue]") {
  use_store(30s, 0);
  weave::DelayQueue<Order> q(fresh_queue("stats"));
  for (int i = 0; i < 3; ++i) q.offer(Order{"later", i}, 1h);
  for (int i = 0; i < 4; ++i) q.offer(Order{"now", i}, 0ms);
  CHECK(same(q.stats(), 3, 4, 0, 0));
  auto a = q.take(1s);
  auto b = q.take(1s);
  REQUIRE((a && b));
  CHECK(same(q.stats(), 3, 2, 2, 0));
  CHECK(b->fail("no retries left"));  // retries = 0: dead at once
  CHECK(same(q.stats(), 3, 2, 1, 1));
  a->ack();
  CHECK(same(q.stats(), 3, 2, 0, 1));
}

TEST_CASE("queue: retry delivers again after its delay and is not a failure", "[queue]") {
  use_store();
  weave::DelayQueue<Order> q(fresh_queue("retry"));
  const std::string id = q.offer(Order{"r", 1}, 0ms);
  auto d = q.take(1s);
  REQUIRE(d);
  const std::uint64_t first_token = d->fencing_token();
  d->retry(200ms);
  CHECK(q.inspect(id).state == weave::MessageState::scheduled);
  CHECK_FALSE(q.take(0ms));
  auto again = q.take(5s);
  REQUIRE(again);
  CHECK(again->id() == id);
  CHECK(again->attempt() == 2);
  CHECK(again->failures() == 0);
  CHECK(again->fencing_token() > first_token);
  again->ack();
}

TEST_CASE("queue: failed attempts back off, then the message is dead with its last error, and requeue revives it", "[queue]") {
  use_store(30s, 2, 50ms);
  weave::DelayQueue<Order> q(fresh_queue("fail"));
  const std::string id = q.offer(Order{"f", 1}, 0ms);
  for (int attempt = 1; attempt <= 3; ++attempt) {
    auto d = q.take(5s);
    REQUIRE(d);
    CHECK(d->attempt() == attempt);
    CHECK(d->failures() == attempt - 1);
    if (attempt > 1) CHECK(d->last_error() == "boom " + std::to_string(attempt - 1));
    CHECK(d->fail("boom " + std::to_string(attempt)) == (attempt == 3));  // retries = 2
  }
  CHECK(same(q.stats(), 0, 0, 0, 1));
  const weave::MessageInfo info = q.inspect(id);
  CHECK(info.state == weave::MessageState::dead);
  CHECK(info.failures == 3);
  CHECK(info.last_error == "boom 3");
  CHECK_FALSE(q.take(300ms));  // dead messages are not delivered
  CHECK(q.requeue(id));
  CHECK_FALSE(q.requeue(id));  // not dead any more
  auto d = q.take(1s);
  REQUIRE(d);
  CHECK(d->failures() == 0);
  d->dead("given up by hand");
  CHECK(q.inspect(id).last_error == "given up by hand");
  CHECK(q.purge_dead() == 1);
  CHECK(same(q.stats(), 0, 0, 0, 0));
}

TEST_CASE("queue: peek lists the scheduled messages by due time, dead_letters the dead ones newest first", "[queue]") {
  use_store(30s, 0, 10ms);
  weave::Queue q(fresh_queue("list"));
  q.offer_json(R"({"n":3})", 3h, {.id = "late"});
  q.offer_json(R"({"n":1})", 0ms, {.id = "now"});
  q.offer_json(R"({"n":2})", 1h, {.id = "soon"});
  q.offer_json(R"({"n":4})", 0ms, {.id = "doomed-1"});
  q.offer_json(R"({"n":5})", 0ms, {.id = "doomed-2"});
  // (offer order among the due ones: now, doomed-1, doomed-2)
  auto first = q.take_json(1s);
  REQUIRE(first);
  CHECK(first->id() == "now");
  first->retry(2h);  // scheduled again, between soon and late, one delivery made
  q.take_json(1s)->fail("first death");    // retries = 0: dead at once
  q.take_json(1s)->fail("second death");

  const auto peeked = q.peek(10);
  REQUIRE(peeked.size() == 3);
  CHECK(peeked[0].id == "soon");
  CHECK(peeked[1].id == "now");
  CHECK(peeked[1].info.deliveries == 1);
  CHECK(peeked[2].id == "late");
  CHECK(peeked[2].payload == R"({"n":3})");
  CHECK(peeked[0].info.state == weave::MessageState::scheduled);
  CHECK(peeked[0].info.due < peeked[1].info.due);
  CHECK(q.peek(1).size() == 1);

  const auto dead = q.dead_letters(10);
  REQUIRE(dead.size() == 2);
  CHECK(dead[0].id == "doomed-2");  // newest first
  CHECK(dead[0].info.last_error == "second death");
  CHECK(dead[1].id == "doomed-1");
  CHECK(dead[1].payload == R"({"n":4})");
  CHECK(dead[1].info.failures == 1);
  CHECK(q.dead_letters(1).size() == 1);
  CHECK(weave::Queue(fresh_queue("list-empty")).peek().empty());
}

TEST_CASE("queue: a delivery dropped unsettled counts as a failed attempt", "[queue]") {
  use_store(30s, 3, 10ms);
  weave::DelayQueue<Order> q(fresh_queue("dropped"));
  q.offer(Order{"x", 1}, 0ms);
  try {
    auto d = q.take(1s);
    REQUIRE(d);
    throw std::runtime_error("the handler failed");
  } catch (const std::runtime_error&) {
  }
  auto again = q.take(5s);
  REQUIRE(again);
  CHECK(again->failures() == 1);
  CHECK_THAT(again->last_error(), Catch::Contains("dropped without ack"));
  again->ack();
}

TEST_CASE("queue: ack_and_take acknowledges and hands out the next message, and tells a refused ack through the lease", "[queue]") {
  use_store();
  weave::Queue q(fresh_queue("ack-take"));
  const std::string a = q.offer_json("1", 0ms), b = q.offer_json("2", 0ms), c = q.offer_json("3", 0ms);
  auto d = q.take_json(1s);
  REQUIRE(d);
  CHECK(d->id() == a);
  auto next = d->ack_and_take(1s);
  REQUIRE(next);
  CHECK(next->id() == b);
  CHECK(d->settled());
  CHECK_FALSE(d->lease().lost());
  CHECK(q.inspect(a).state == weave::MessageState::absent);
  CHECK(q.cancel(b));  // cancelled under its holder: the ack is refused, the take still happens
  auto last = next->ack_and_take(1s);
  REQUIRE(last);
  CHECK(last->id() == c);
  CHECK(next->lease().lost());
  CHECK_THAT(next->lease().lost_cause(), Catch::Contains("cancelled"));
  CHECK_FALSE(last->ack_and_take(0ms));  // acknowledged; nothing left
  CHECK(same(q.stats(), 0, 0, 0, 0));
}

TEST_CASE("queue: take_many hands out up to max due messages in offer order, each under its own lease", "[queue][batch]") {
  use_store();
  weave::Queue q(fresh_queue("take-many"));
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(q.offer_json(std::to_string(i), 0ms));
  const std::string later = q.offer_json("later", 1h);
  auto batch = q.take_many_json(3, 1s);
  REQUIRE(batch.size() == 3);
  std::set<std::uint64_t> tokens;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    CHECK(batch[i].id() == ids[i]);
    CHECK(batch[i].payload() == std::to_string(i));
    CHECK(batch[i].attempt() == 1);
    CHECK_FALSE(batch[i].lease().lost());
    tokens.insert(batch[i].fencing_token());
  }
  CHECK(tokens.size() == 3);  // each delivery its own fencing token
  CHECK(same(q.stats(), 1, 2, 3, 0));
  auto rest = q.take_many_json(10, 1s);  // fewer due than asked: what is due, at once
  REQUIRE(rest.size() == 2);
  CHECK(rest[0].id() == ids[3]);
  CHECK(rest[1].id() == ids[4]);
  CHECK(same(q.stats(), 1, 0, 5, 0));
  for (auto& d : batch) d.ack();
  for (auto& d : rest) d.ack();
  CHECK(q.take_many_json(10, 0ms).empty());  // only `later` is left, not due
  CHECK(q.cancel(later));
  CHECK(same(q.stats(), 0, 0, 0, 0));
}

TEST_CASE("queue: ack_and_take_many acks the unsettled deliveries of a batch and takes the next batch", "[queue][batch]") {
  use_store();
  weave::Queue q(fresh_queue("ack-take-many"));
  std::vector<std::string> ids;
  for (int i = 0; i < 7; ++i) ids.push_back(q.offer_json(std::to_string(i), 0ms));
  auto batch = q.take_many_json(3, 1s);
  REQUIRE(batch.size() == 3);
  CHECK_FALSE(batch[1].fail("this one failed"));  // settled here: scheduled again after its backoff, not acked
  CHECK(q.cancel(ids[2]));                        // cancelled under its holder: its ack is refused, quietly
  auto next = q.ack_and_take_many(batch, 3, 1s);
  REQUIRE(next.size() == 3);
  CHECK(next[0].id() == ids[3]);
  CHECK(next[2].id() == ids[5]);
  CHECK(batch[0].settled());
  CHECK_FALSE(batch[0].lease().lost());
  CHECK(q.inspect(ids[0]).state == weave::MessageState::absent);  // acked
  CHECK(q.inspect(ids[1]).failures == 1);                         // failed, not acked
  CHECK(batch[2].lease().lost());
  CHECK_THAT(batch[2].lease().lost_cause(), Catch::Contains("cancelled"));
  // The failed one comes back after its backoff (20 ms) behind the last one.
  std::vector<std::string> seen;
  while (!next.empty() && seen.size() < 5) {
    for (const auto& d : next) seen.push_back(d.id());
    next = q.ack_and_take_many(next, 3, seen.size() < 5 ? 5s : 0ms);
  }
  CHECK(seen == std::vector<std::string>{ids[3], ids[4], ids[5], ids[6], ids[1]});
  CHECK(next.empty());
  CHECK(same(q.stats(), 0, 0, 0, 0));
}

TEST_CASE("queue: many batch takes at once hand out each message once, thousands in one step", "[queue][batch]") {
  use_store();
  const std::string name = fresh_queue("take-many-together");
  weave::Queue q(name);
  constexpr int kThreads = 8, kEach = 1000;
  std::vector<weave::JsonOffer> offers(kThreads * kEach, weave::JsonOffer{"{}", 0ms});
  q.offer_many_json(offers);
  std::vector<std::vector<weave::QueueDelivery>> got(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)  // (on Redis the waiting ones go in one script: 6,000+ leases in one take step)
    threads.emplace_back([&, t] {
      try {
        got[t] = weave::Queue(name).take_many_json(kEach, 1s);
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  CHECK(errors == std::vector<std::string>(kThreads));
  std::set<std::string> ids;
  std::size_t total = 0;
  for (const auto& g : got) {
    total += g.size();
    for (const auto& d : g) ids.insert(d.id());
  }
  CHECK(total == kThreads * kEach);
  CHECK(ids.size() == total);
  CHECK(same(q.stats(), 0, 0, kThreads * kEach, 0));
  for (auto& g : got) CHECK(q.ack_and_take_many(g, 1, 0ms).empty());
  CHECK(same(q.stats(), 0, 0, 0, 0));
}

TEST_CASE("queue: once stopped, ack_and_take_many acks and takes nothing", "[queue][batch]") {
  use_store();
  weave::Queue q(fresh_queue("ack-take-stopped"));
  for (int i = 0; i < 4; ++i) q.offer_json(std::to_string(i), 0ms);
  auto batch = q.take_many_json(2, 1s);
  REQUIRE(batch.size() == 2);
  std::stop_source stop;
  stop.request_stop();
  CHECK(q.ack_and_take_many(batch, 2, 1s, stop.get_token()).empty());
  CHECK(batch[0].settled());
  CHECK(batch[1].settled());
  CHECK(same(q.stats(), 0, 2, 0, 0));  // acked, and the other two still ready: none taken to be dropped
  auto one = q.take_json(1s);
  REQUIRE(one);
  CHECK_FALSE(one->ack_and_take(1s, stop.get_token()));
  CHECK(same(q.stats(), 0, 1, 0, 0));
}

TEST_CASE("queue: a waiting take_many is woken by an offer and refuses a bad max or another queue's delivery", "[queue][batch]") {
  use_store();
  const std::string name = fresh_queue("take-many-wait");
  weave::Queue q(name);
  std::thread offerer([name] {
    std::this_thread::sleep_for(200ms);
    weave::Queue(name).offer_json("late", 0ms);
  });
  const auto t0 = Clock::now();
  auto batch = q.take_many_json(8, 60s);  // would return empty after 60 s if never woken
  offerer.join();
  REQUIRE(batch.size() == 1);
  CHECK(batch[0].payload() == "late");
  CHECK(Clock::now() - t0 < 30s);
  for (std::size_t bad : {std::size_t{0}, std::size_t{1001}}) {
    try {
      q.take_many_json(bad, 0ms);
      FAIL("max " << bad << " was accepted");
    } catch (const weave::QueueError& e) {
      CHECK_THAT(e.what(), Catch::Contains(name) && Catch::Contains("max must be 1..1000"));
    }
  }
  weave::Queue other(fresh_queue("take-many-other"));
  CHECK_THROWS_AS(other.ack_and_take_many(batch, 1, 0ms), weave::UsageError);
  CHECK_FALSE(batch[0].settled());  // refused before anything was acked
  CHECK(q.ack_and_take_many(batch, 1, 0ms).empty());
  CHECK(same(q.stats(), 0, 0, 0, 0));
}

TEST_CASE("queue: a typed take_many decodes each message and dead-letters the one that does not decode", "[queue][batch]") {
  use_store();
  const std::string name = fresh_queue("typed-take-many");
  weave::DelayQueue<Order> q(name);
  const std::string bad = offer_with_undecodable(name);
  auto batch = q.take_many(3, 1s);
  REQUIRE(batch.size() == 2);
  CHECK(batch[0].value().id == "first");
  CHECK(batch[1].value().cents == 3);
  CHECK(q.inspect(bad).state == weave::MessageState::dead);
  CHECK(q.ack_and_take_many(batch, 3, 0ms).empty());
  CHECK(same(q.stats(), 0, 0, 0, 1));
  q.purge_dead();
}

TEST_CASE("queue: offer_json_async stores each message and its future holds the id, bad input throws at once", "[queue][async-offer]") {
  use_store();
  const std::string name = fresh_queue("offer-async");
  weave::Queue q(name);
  std::future<std::string> a = q.offer_json_async("1", 0ms);
  std::future<std::string> b = q.offer_json_async("2", 1h, {.id = "b"});
  std::future<std::string> again = q.offer_json_async("ignored", 0ms, {.id = "b"});  // the same id: one message
  const std::string id_a = a.get();
  CHECK_FALSE(id_a.empty());
  CHECK(b.get() == "b");
  CHECK(again.get() == "b");
  CHECK(same(q.stats(), 1, 1, 0, 0));
  auto d = q.take_json(1s);
  REQUIRE(d);
  CHECK(d->id() == id_a);
  CHECK(d->payload() == "1");
  d->ack();
  CHECK(q.inspect("b").state == weave::MessageState::scheduled);
  CHECK_THROWS_WITH(q.offer_json_async("{}", -1ms), Catch::Contains(name) && Catch::Contains("negative"));
  CHECK_THROWS_AS(q.offer_json_async("{}", 0ms, {.id = std::string("bad\x01id")}), weave::QueueError);
  weave::DelayQueue<Order> typed(name);
  CHECK(typed.offer_async(Order{"typed", 7}, 0ms, {.id = "t"}).get() == "t");
  auto t = typed.take(1s);
  REQUIRE(t);
  CHECK(t->value().cents == 7);
  t->ack();
  CHECK(q.cancel("b"));
  CHECK(same(q.stats(), 0, 0, 0, 0));
}

TEST_CASE("queue: asynchronous offers of one thread reach the store in the order they were made", "[queue][async-offer]") {
  use_store();
  weave::Queue q(fresh_queue("offer-async-order"));
  constexpr int kOffers = 20000;  // many sends, two in flight at a time on Redis
  std::vector<std::future<std::string>> pending;
  pending.reserve(kOffers);
  for (int i = 0; i < kOffers; ++i) pending.push_back(q.offer_json_async("{}", 0ms, {.id = std::to_string(i)}));
  for (auto& f : pending) f.get();
  // Messages due at one instant come out in the order the store took them;
  // across instants, by due time: either way, in call order.
  int taken = 0;
  CHECK(taken_out_of_order(q, taken) == 0);
  CHECK(taken == kOffers);
}

TEST_CASE("queue: cancel and reschedule act on a queued message by id", "[queue]") {
  use_store();
  weave::DelayQueue<Order> q(fresh_queue("edit"));
  const std::string a = q.offer(Order{"a", 1}, 1h), b = q.offer(Order{"b", 2}, 1h);
  CHECK(q.cancel(a));
  CHECK_FALSE(q.cancel(a));
  CHECK(q.reschedule(b, 0ms));
  CHECK_FALSE(q.reschedule("no-such-id", 0ms));
  auto d = q.take(1s);
  REQUIRE(d);
  CHECK(d->id() == b);
  CHECK_FALSE(q.reschedule(b, 0ms));  // in flight
  CHECK(q.cancel(b));                 // cancelled under its holder:
  CHECK_THROWS_AS(d->ack(), weave::DeliveryLost);  // the holder is told
  CHECK(same(q.stats(), 0, 0, 0, 0));
}

// A store that may send a request twice keeps a marker of a cancel in
// flight until the lease's end (its holder's settle then hears "cancelled",
// not "acknowledged already"): to everyone else the message is gone at once.
TEST_CASE("queue: a message cancelled in flight is gone for everyone else at once, and its id may be offered again", "[queue]") {
  use_store();
  weave::DelayQueue<Order> q(fresh_queue("cancel-held"));
  q.offer(Order{"first", 1}, 0ms, {.id = "m-1"});
  auto d = q.take(1s);
  REQUIRE(d);
  REQUIRE(q.cancel("m-1"));
  CHECK(q.inspect("m-1").state == weave::MessageState::absent);
  CHECK_FALSE(q.cancel("m-1"));
  CHECK_FALSE(q.reschedule("m-1", 0ms));
  CHECK(same(q.stats(), 0, 0, 0, 0));
  CHECK_THROWS_AS(d->ack(), weave::DeliveryLost);  // its holder is told
  CHECK_THAT(d->lease().lost_cause(), Catch::Contains("cancelled"));
  CHECK(q.offer(Order{"second", 2}, 0ms, {.id = "m-1"}) == "m-1");  // queued anew, not "already queued"
  CHECK(same(q.stats(), 0, 1, 0, 0));
  auto again = q.take(1s);
  REQUIRE(again);
  CHECK(again->value().id == "second");
  again->ack();
  CHECK(same(q.stats(), 0, 0, 0, 0));
}

TEST_CASE("queue: a waiting take is woken by an earlier message, not by its timeout", "[queue]") {
  use_store();
  weave::DelayQueue<Order> q(fresh_queue("wake"));
  q.offer(Order{"late", 1}, 1h);
  std::thread offerer([&] {
    std::this_thread::sleep_for(200ms);
    weave::DelayQueue<Order>(q.name()).offer(Order{"early", 2}, 100ms);
  });
  auto d = q.take(60s);  // would return empty after 60 s if never woken
  offerer.join();
  REQUIRE(d);
  CHECK(d->value().id == "early");
  d->ack();
}

TEST_CASE("queue: a held delivery is renewed past its lease and nobody else gets it", "[queue]") {
  use_store(300ms);
  weave::DelayQueue<Order> q(fresh_queue("renew"));
  q.offer(Order{"held", 1}, 0ms);
  auto d = q.take(1s);
  REQUIRE(d);
  CHECK_FALSE(q.take(1200ms));  // four leases long
  CHECK_FALSE(d->lease().lost());
  d->ack();
  CHECK(same(q.stats(), 0, 0, 0, 0));
}

TEST_CASE("queue: a typed ack_and_take decodes the next message, and dead-letters one that does not decode", "[queue]") {
  use_store();
  const std::string name = fresh_queue("typed-ack-take");
  weave::DelayQueue<Order> q(name);
  const std::string bad = offer_with_undecodable(name);
  auto d = q.take(1s);
  REQUIRE(d);
  CHECK(d->value().id == "first");
  auto next = q.ack_and_take(*d, 1s);
  REQUIRE(next);
  CHECK(next->value().id == "third");  // the one between could not be read as an Order
  CHECK(q.inspect(bad).state == weave::MessageState::dead);
  next->ack();
  CHECK(same(q.stats(), 0, 0, 0, 1));
  q.purge_dead();
}

TEST_CASE("queue: a payload that no longer decodes is dead-lettered with the reason, never handed out", "[queue]") {
  use_store();
  const std::string name = fresh_queue("decode");
  weave::Queue raw(name);
  const std::string bad = raw.offer_json(R"({"id": 7})", 0ms);  // another version's shape
  weave::DelayQueue<Order> q(name);
  const std::string good = q.offer(Order{"fine", 1}, 0ms);
  auto d = q.take(1s);
  REQUIRE(d);
  CHECK(d->id() == good);
  d->ack();
  const weave::MessageInfo info = q.inspect(bad);
  CHECK(info.state == weave::MessageState::dead);
  CHECK_THAT(info.last_error, Catch::Contains("does not decode"));
}

TEST_CASE("queue: bad names, ids, delays and payloads are typed errors naming the queue", "[queue]") {
  use_store();
  CHECK_THROWS_AS(weave::Queue(""), weave::QueueError);
  CHECK_THROWS_AS(weave::Queue(std::string("a\0b", 3)), weave::QueueError);
  CHECK_THROWS_AS(weave::Queue("bad\xff" "name"), weave::QueueError);
  CHECK_THROWS_AS(weave::Queue(std::string(201, 'q')), weave::QueueError);
  weave::QueueOptions small;
  small.url = test_store_url();
  small.max_payload_bytes = 64;
  weave::configure_queues(small);
  weave::DelayQueue<Order> q(fresh_queue("bad"));
  try {
    q.offer(Order{"o", 1}, -1ms);
    FAIL("a negative delay was accepted");
  } catch (const weave::QueueError& e) {
    CHECK(e.key() == q.name());
    CHECK_THAT(e.what(), Catch::Contains("negative"));
  }
  CHECK_THROWS_AS(q.offer(Order{"o", 1}, std::chrono::hours(24 * 365 * 20)), weave::QueueError);
  CHECK_THROWS_WITH(q.offer(Order{std::string(100, 'x'), 1}, 0ms), Catch::Contains("max_payload_bytes"));
  CHECK_THROWS_AS(q.offer(Order{"o", 1}, 0ms, {.id = "tab\there"}), weave::QueueError);
  CHECK_THROWS_WITH(q.offer(Order{"bad\xc3", 1}, 0ms), Catch::Contains("does not encode"));
  CHECK(same(q.stats(), 0, 0, 0, 0));  // nothing half-queued
  weave::QueueOptions wrong;
  wrong.retries = -1;
  CHECK_THROWS_WITH(weave::configure_queues(wrong), Catch::Contains("QueueOptions::retries"));
}

// Scripts the queue's node has run (EVALSHA + EVAL), from INFO commandstats.
long long scripts_run(const std::string& queue) {
  auto exec = weave::store::open_executor(test_admin_url(), {});
  const std::string key = "{weave:queue:" + queue + "}";
  weave::store::Reply r = exec->command(weave::store::Command{"INFO", "commandstats"}, key, "test info");
  const std::string text(weave::store::ReplyView(r, "test info").text());
  long long total = 0;
  for (const char* cmd : {"cmdstat_evalsha:calls=", "cmdstat_eval:calls="})
    if (auto at = text.find(cmd); at != std::string::npos) total += std::stoll(text.substr(at + std::strlen(cmd)));
  return total;
}

// The asynchronous producers' order keys of queue `name`.
std::vector<std::string> order_keys(weave::store::Executor& exec, const std::string& name) {
  std::set<std::string> found;  // (a key may come twice while a cluster reshards)
  weave::store::scan_keys(exec, "{weave:queue:" + name + "}:o:*",
                          [&](const std::vector<std::string>& keys) { found.insert(keys.begin(), keys.end()); },
                          "test scan");
  return {found.begin(), found.end()};
}

// Sets maxmemory on every master of the store (0: no limit): at 1 byte the
// server is past it at once, as a full Redis with noeviction is.
void set_maxmemory(const std::string& bytes) {
  auto exec = weave::store::open_executor(test_admin_url(), {});
  exec->for_each_master([&](weave::store::NodeExecutor& n) {
    n.command(weave::store::Command{"CONFIG", "SET", "maxmemory", bytes}, "", "test config");
  });
}

// A Redis at maxmemory (noeviction) refuses what would grow its data. The
// queue's offers are refused, each with the server's OOM error; everything
// that drains the queue goes on: takes, renewals of held leases, and
// acknowledgements, also those sent in one script with a refused offer
// (requests made at the same time go together).
TEST_CASE("queue: at the server's maxmemory offers are refused with OOM, and takes, renewals and acks go on",
          "[queue][redis]") {
  use_store(600ms);  // renewed every 200 ms
  const std::string name = fresh_queue("oom");
  weave::Queue q(name);
  constexpr int kMessages = 64;
  for (int i = 0; i < kMessages; ++i) q.offer_json("{}", 0ms, {.id = "m" + std::to_string(i)});
  std::vector<weave::QueueDelivery> held;
  for (int i = 0; i < kMessages / 2; ++i) {
    std::optional<weave::QueueDelivery> d = q.take_json(5s);
    REQUIRE(d);
    held.push_back(std::move(*d));
  }
  set_maxmemory("1");
  struct Restore {
    ~Restore() { set_maxmemory("0"); }
  } restore;

  std::optional<weave::QueueDelivery> taken_at_oom = q.take_json(5s);  // drains: goes on
  CHECK(taken_at_oom);
  std::this_thread::sleep_for(900ms);  // past the lease: only renewals keep what is held
  for (const weave::QueueDelivery& d : held) CHECK_FALSE(d.lease().lost());

  // Acks and offers at once, from 8 threads: they share scripts.
  std::atomic<int> acked{0}, ack_errors{0}, refused{0}, offered{0}, other{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (std::size_t i = static_cast<std::size_t>(t); i < held.size(); i += 8) {
        try {
          q.offer_json("{}", 0ms, {.id = "new" + std::to_string(i)});
          ++offered;
        } catch (const weave::ReplyError& e) {
          ++(std::string(e.what()).find("OOM") != std::string::npos ? refused : other);
        }
        try {
          held[i].ack();
          ++acked;
        } catch (const std::exception&) {
          ++ack_errors;
        }
      }
    });
  for (std::thread& t : threads) t.join();
  CHECK(ack_errors == 0);
  CHECK(acked == static_cast<int>(held.size()));
  CHECK(refused == static_cast<int>(held.size()));
  CHECK(offered == 0);
  CHECK(other == 0);
  if (taken_at_oom) taken_at_oom->ack();
  set_maxmemory("0");
  const weave::QueueStats st = q.stats();
  CHECK(st.in_flight == 0);
  CHECK(st.ready == static_cast<std::uint64_t>(kMessages / 2 - 1));  // none of the acked ones runs again
}

// A queue's name is %-encoded in its keys' hash tag: a '}' in it cannot
// reach another queue's message keys (ids are the caller's text too).
TEST_CASE("queue: a name with braces cannot reach another queue's messages", "[queue][redis]") {
  use_store();
  const std::string name = fresh_queue("braces");
  weave::Queue q(name);
  weave::Queue crafted(name + "}:m:x");
  crafted.offer_json(R"({"v": 1})", 0ms, {.id = "1"});
  q.offer_json(R"({"v": 2})", 0ms, {.id = "x}:m:1"});
  std::optional<weave::QueueDelivery> mine = q.take_json(5s);
  REQUIRE(mine);
  CHECK(mine->payload() == R"({"v": 2})");
  mine->ack();
  std::optional<weave::QueueDelivery> theirs = crafted.take_json(5s);
  REQUIRE(theirs);
  CHECK(theirs->payload() == R"({"v": 1})");
  theirs->ack();
}

TEST_CASE("queue: an asynchronous producer whose order key is gone moves to a new one, and nothing is lost", "[queue][async-offer][redis]") {
  use_store();
  const std::string name = fresh_queue("offer-async-key-gone");
  weave::Queue q(name);
  auto exec = weave::store::open_executor(test_admin_url(), {});
  q.offer_json_async("{}", 0ms, {.id = "first"}).get();
  const std::vector<std::string> before = order_keys(*exec, name);
  REQUIRE(before.size() == 1);
  const weave::store::Reply ttl = exec->command(weave::store::Command{"PTTL", before[0]}, before[0], "test pttl");
  const long long ttl_ms = weave::store::ReplyView(ttl, "test pttl").integer();
  CHECK(ttl_ms > 0);
  CHECK(ttl_ms <= 600'000);  // an idle producer's key goes by itself
  // As if the producer had been idle past its key: its next send is refused
  // (not its first, and no predecessor on record), then goes as a new producer's.
  exec->command(weave::store::Command{"DEL", before[0]}, before[0], "test del");
  q.offer_json_async("{}", 0ms, {.id = "second"}).get();
  const std::vector<std::string> after = order_keys(*exec, name);
  REQUIRE(after.size() == 1);
  CHECK(after[0] != before[0]);
  CHECK(same(q.stats(), 0, 2, 0, 0));
}

TEST_CASE("queue: asynchronous offers keep call order when the producer moves to a new key mid-stream", "[queue][async-offer][redis]") {
  use_store();
  const std::string name = fresh_queue("offer-async-move");
  weave::Queue q(name);
  auto exec = weave::store::open_executor(test_admin_url(), {});
  const auto drop_order_keys = [&] {
    for (const std::string& k : order_keys(*exec, name)) exec->command(weave::store::Command{"DEL", k}, k, "test del");
  };
  constexpr int kOffers = 20000, kDrops = 8;
  std::vector<std::future<std::string>> pending;
  pending.reserve(kOffers);
  for (int i = 0; i < kOffers; ++i) {
    pending.push_back(q.offer_json_async("{}", 0ms, {.id = std::to_string(i)}));
    // As if each key had run out: the sends in flight are refused and move to a new producer.
    if (i % (kOffers / kDrops) == kOffers / kDrops / 2) drop_order_keys();
  }
  for (auto& f : pending) f.get();
  int taken = 0;
  CHECK(taken_out_of_order(q, taken) == 0);
  CHECK(taken == kOffers);
}

TEST_CASE("queue: an ack the store answers with an error does not cost the batch taken with it", "[queue][batch][redis]") {
  use_store();
  const std::string name = fresh_queue("ack-error");
  weave::Queue q(name);
  const std::string a = q.offer_json("a", 0ms), b = q.offer_json("b", 0ms);
  auto batch = q.take_many_json(2, 1s);
  REQUIRE(batch.size() == 2);
  write_raw("{weave:queue:" + name + "}:m:" + a, "not a message hash");  // its ack meets WRONGTYPE
  const std::string c = q.offer_json("c", 0ms);
  auto next = q.ack_and_take_many(batch, 2, 1s);
  REQUIRE(next.size() == 1);
  CHECK(next[0].id() == c);
  CHECK(batch[0].lease().lost());
  CHECK_THAT(batch[0].lease().lost_cause(), Catch::Contains("WRONGTYPE"));
  CHECK_FALSE(batch[1].lease().lost());
  CHECK(q.inspect(b).state == weave::MessageState::absent);  // acked
  next[0].ack();
}

TEST_CASE("queue: offers, takes and acks that arrive together share scripts, and each gets its own answer", "[queue][redis]") {
  use_store();
  const std::string name = fresh_queue("together");
  weave::Queue q(name);
  constexpr int kThreads = 16, kEach = 100;
  const long long before = scripts_run(name);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) q.offer_json("{}", 0ms, {.id = std::to_string(t) + "-" + std::to_string(i)});
      q.offer_json("{}", 0ms, {.id = "same"});  // one message, whoever is first
    });
  for (auto& t : threads) t.join();
  threads.clear();
  CHECK(same(q.stats(), 0, kThreads * kEach + 1, 0, 0));
  std::mutex m;
  std::multiset<std::string> delivered;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      auto d = q.take_json(100ms);
      while (d) {
        {
          const std::lock_guard lock(m);
          delivered.insert(std::string(d->id()));
        }
        d = d->ack_and_take(100ms);
      }
    });
  for (auto& t : threads) t.join();
  const long long scripts = scripts_run(name) - before;
  CHECK(delivered.size() == std::size_t(kThreads * kEach + 1));
  CHECK(std::set<std::string>(delivered.begin(), delivered.end()).size() == delivered.size());  // each once
  CHECK(delivered.count("same") == 1);
  CHECK(same(q.stats(), 0, 0, 0, 0));
  // 3,200 requests (an offer and an ack-and-take per message); sent one by
  // one they would run one script each.
  CHECK(scripts < kThreads * kEach * 2);
}

TEST_CASE("queue: a request that fails answers alone, and the requests sent with it succeed", "[queue][redis]") {
  use_store();
  const std::string name = fresh_queue("one-fails");
  weave::Queue q(name);
  write_raw("{weave:queue:" + name + "}:m:bad", "not a message");  // offering id "bad" meets WRONGTYPE
  std::atomic<int> refused{0}, other_errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        try {
          q.offer_json("{}", 0ms, {.id = i % 10 == 0 ? std::string("bad") : std::to_string(t) + "-" + std::to_string(i)});
        } catch (const weave::ReplyError& e) {
          (e.code() == "WRONGTYPE" ? refused : other_errors).fetch_add(1);
        }
      }
    });
  for (auto& t : threads) t.join();
  CHECK(refused == 8 * 5);
  CHECK(other_errors == 0);
  CHECK(same(q.stats(), 0, 8 * 45, 0, 0));
}

TEST_CASE("queue: an idle consumer sends nothing while it waits for the first due time", "[queue][redis]") {
  use_store();
  const std::string name = fresh_queue("idle");
  weave::DelayQueue<Order> q(name);
  q.offer(Order{"far", 1}, 1h);
  std::optional<weave::Delivery<Order>> got;
  std::thread consumer([&] { got = q.take(3s); });
  std::this_thread::sleep_for(500ms);  // its first takes and its subscription
  const long long before = scripts_run(name);
  REQUIRE(before > 0);  // (the offer and the first takes ran scripts: the count is read)
  std::this_thread::sleep_for(2s);
  const long long after = scripts_run(name);
  consumer.join();
  CHECK(after == before);
  CHECK_FALSE(got);
}

TEST_CASE("queue processes: a SIGKILLed worker's message goes to another worker within its lease and counts as a failed attempt", "[queue][processes][redis]") {
  use_store(500ms, 3, 10ms);
  const std::string name = fresh_queue("killed");
  weave::DelayQueue<Order> q(name);
  const std::string id = q.offer(Order{"k", 1}, 0ms);
  ChildSignal took;
  ForkedChild child([&] {
    weave::DelayQueue<Order> mine(name);
    auto d = mine.take(5s);
    took.send(d ? 'y' : 'n');
    ::pause();  // holding it, until killed
    return std::string();
  });
  REQUIRE(took.receive() == 'y');
  CHECK_FALSE(q.take(0ms));  // held (and renewed) by the child
  ::kill(child.pid(), SIGKILL);
  auto d = q.take(500ms + 1s);
  REQUIRE(d);
  CHECK(d->id() == id);
  CHECK(d->attempt() == 2);
  CHECK(d->failures() == 1);
  CHECK_THAT(d->last_error(), Catch::Contains("lease ran out"));
  d->ack();
  child.wait();
}

TEST_CASE("queue processes: a message dead-lettered by its handler or by a worker SIGKILLed on its last attempt is a dead_lettered event", "[queue][processes][redis]") {
  EventRecorder events({weave::EventKind::dead_lettered});
  use_store(500ms, 0, 10ms);  // no retries: the first failure is the last
  const std::string name = fresh_queue("dead-event");
  weave::DelayQueue<Order> q(name);
  const std::string failed = q.offer(Order{"f", 1}, 0ms), killed = q.offer(Order{"k", 2}, 10ms);
  auto d = q.take(5s);
  REQUIRE(d);
  REQUIRE(d->id() == failed);
  CHECK(d->fail("card declined"));
  ChildSignal took;
  ForkedChild child([&] {
    weave::DelayQueue<Order> mine(name);
    auto held = mine.take(5s);
    took.send(held && held->id() == killed ? 'y' : 'n');
    ::pause();  // holding it, until killed
    return std::string();
  });
  REQUIRE(took.receive() == 'y');
  ::kill(child.pid(), SIGKILL);
  child.wait();
  std::this_thread::sleep_for(500ms + 300ms);  // past its lease: the next look reclaims it
  CHECK(same(q.stats(), 0, 0, 0, 2));
  const auto dead = events.events();
  REQUIRE(dead.size() == 2);
  CHECK(dead[0].key == name + "/" + failed);
  CHECK(dead[0].cause == "dead-lettered: card declined");
  CHECK(dead[1].key == name + "/" + killed);
  CHECK_THAT(dead[1].cause, Catch::StartsWith("dead-lettered: its delivery lease ran out") &&
                                Catch::EndsWith("on its last attempt"));
}

TEST_CASE("queue processes: a SIGSTOPped worker loses its message, and its ack after the takeover is refused", "[queue][processes][redis]") {
  use_store(500ms, 3, 10ms);
  const std::string name = fresh_queue("stopped");
  weave::DelayQueue<Order> q(name);
  q.offer(Order{"s", 1}, 0ms);
  ChildSignal took;
  ForkedChild child([&] {
    weave::DelayQueue<Order> mine(name);
    auto d = mine.take(5s);
    took.send(d ? 'y' : 'n');
    if (!d) return std::string("none");
    ::raise(SIGSTOP);  // a stall: the parent continues us after the takeover
    try {
      d->ack();
      return std::string("acked");
    } catch (const weave::DeliveryLost&) {
      return std::string(d->lease().lost() ? "refused-lost" : "refused");
    }
  });
  REQUIRE(took.receive() == 'y');
  int status = 0;
  REQUIRE(::waitpid(child.pid(), &status, WUNTRACED) == child.pid());
  REQUIRE(WIFSTOPPED(status));
  auto d = q.take(500ms + 1s);
  REQUIRE(d);
  CHECK(d->attempt() == 2);
  CHECK(d->failures() == 1);
  ::kill(child.pid(), SIGCONT);
  CHECK(child.wait() == "refused-lost");
  d->ack();  // the new holder's ack stands
  CHECK(same(q.stats(), 0, 0, 0, 0));
}

TEST_CASE("queue processes: a queue used before fork() works in the child, on its own connections", "[queue][processes][redis]") {
  use_store();
  weave::DelayQueue<Order> q(fresh_queue("fork"));
  CHECK_FALSE(q.take(50ms));  // the parent subscribed and pooled connections
  ForkedChild child([&] {
    auto d = q.take(10s);  // the parent's handle, waiting: woken through the child's own subscription
    if (!d) return std::string("none");
    const std::string got = d->id() + " " + d->value().id;
    d->ack();
    return got + (q.offer(Order{"from-child", 4}, 0ms).empty() ? " no-offer" : " offered");
  });
  std::this_thread::sleep_for(300ms);  // the child waits on an empty queue
  const std::string id = q.offer(Order{"forked", 3}, 0ms);
  CHECK(child.wait() == id + " forked offered");
  CHECK(child.exited_cleanly());
  auto d = q.take(5s);  // the parent goes on with its own
  REQUIRE(d);
  CHECK(d->value().id == "from-child");
  d->ack();
  CHECK(same(q.stats(), 0, 0, 0, 0));
}

TEST_CASE("queue processes: a due message is delivered to a process that never offered, after the offerer exited", "[queue][processes][redis]") {
  use_store();
  const std::string name = fresh_queue("orphan");
  ForkedChild offerer([&] { return weave::DelayQueue<Order>(name).offer(Order{"orphan", 9}, 300ms); });
  const std::string id = offerer.wait();
  REQUIRE(offerer.exited_cleanly());
  weave::DelayQueue<Order> q(name);
  auto d = q.take(10s);
  REQUIRE(d);
  CHECK(d->id() == id);
  CHECK(d->value().cents == 9);
  d->ack();
}
// Runs queue_worker under a clock `skew` from the real one (faketime); its
// first output line.
std::string worker_at(const char* skew, const std::string& args) {
  SkewedRun worker(skew, std::string(WEAVE_QUEUE_WORKER) + " " + args);
  const std::string answer = worker.answer();
  UNSCOPED_INFO(args << " at " << skew << " answered '" << answer << "'; " << worker.errors());
  return answer;
}

TEST_CASE("queue clocks: producers and consumers 5 minutes apart still see a message due by the server's clock", "[queue][processes][redis]") {
  const std::string name = fresh_queue("skew");
  const std::string common = test_store_url() + " " + name;
  const auto offered = Clock::now();
  // Offered by a process 5 minutes behind: a client-clock due time would be 5 minutes early for the others.
  const std::string id = worker_at("-5m", "offer " + common + " 1500");
  REQUIRE(id.size() == 36);
  // A consumer 5 minutes ahead finds it not due yet...
  CHECK(worker_at("+5m", "take " + common + " 0") == "none");
  // ...and gets it once due by the server, neither early nor 5 minutes late.
  const std::string got = worker_at("+5m", "take " + common + " 20000");
  CHECK(Clock::now() - offered >= 1499ms);
  REQUIRE(got.rfind(id + " ", 0) == 0);
  // A consumer 5 minutes behind gets a due message at once, not 5 minutes later.
  const std::string second = worker_at("+5m", "offer " + common + " 0");
  CHECK(worker_at("-5m", "take " + common + " 20000").rfind(second + " ", 0) == 0);
}

namespace {

// A worker's offer of tick `tick` of `schedule` (its message id the tick in
// ms, or `id`), with what the worker adds to it.
struct TickOffer {
  std::uint64_t missed = 0;
  std::string_view last_run;
  std::optional<std::int64_t> if_last_tick;
  std::string id;
};
bool offer_tick(weave::detail::QueueStore& store, std::string_view schedule, std::int64_t tick, const TickOffer& extra) {
  const std::string id = extra.id.empty() ? std::to_string(tick) : extra.id;
  weave::detail::QueueOffer offer;
  offer.id = id;
  offer.payload = "{}";
  offer.schedule = schedule;
  offer.tick_ms = tick;
  offer.missed = extra.missed;
  offer.last_run = extra.last_run;
  offer.if_last_tick = extra.if_last_tick;
  return store.offer(offer).added;
}

}  // namespace

TEST_CASE("queue: a schedule's tick is queued once, whoever offers it, and never after a later tick or its own ack", "[queue][schedule]") {
  weave::QueueOptions o;
  o.url = test_store_url();
  weave::detail::QueueRuntime rt(o);
  weave::detail::QueueStore& store = rt.state(fresh_queue("ticks"))->store();
  const weave::detail::QueueTicks before = store.ticks("nightly");
  CHECK(before.last_tick_ms == -1);
  CHECK(before.now_ms > 0);
  auto offer = [&](std::string_view schedule, std::int64_t tick) {
    TickOffer extra;
    extra.id = std::string(schedule) + "@" + std::to_string(tick);
    return offer_tick(store, schedule, tick, extra);
  };
  // A tick a minute ahead by the store's clock: queued once, due then.
  const std::int64_t later = before.now_ms + 60'000;
  CHECK(offer("nightly", later));
  CHECK_FALSE(offer("nightly", later));            // a second worker offers the same tick
  CHECK_FALSE(offer("nightly", later - 30'000));   // an older tick, after a later one
  CHECK(store.ticks("nightly").last_tick_ms == later);
  CHECK(store.ticks("hourly").last_tick_ms == -1);      // each schedule on its own
  const weave::detail::QueueTaken none = store.take(30s, 0.5, 10);
  CHECK(none.messages.empty());
  CHECK(none.next_ms == later);  // due at the tick, not before
  // A tick already due is delivered at once; acknowledged, it is not queued again.
  const std::int64_t due = before.now_ms - 1'000;
  REQUIRE(offer("hourly", due));
  const weave::detail::QueueTaken taken = store.take(30s, 0.5, 10);
  REQUIRE(taken.messages.size() == 1);
  CHECK(taken.messages[0].id == "hourly@" + std::to_string(due));
  CHECK(store.settle(taken.messages[0].id, taken.messages[0].token, weave::detail::SettleAction::ack, 0ms, "", 0.5) ==
        weave::detail::Settled::done);
  CHECK_FALSE(offer("hourly", due));  // its message is gone, its tick is still known
  CHECK(offer("hourly", due + 3'600'000));
}

TEST_CASE("queue: a tick offer counts the ticks missed before it once, and keeps the schedule's last run either way", "[queue][schedule]") {
  weave::QueueOptions o;
  o.url = test_store_url();
  weave::detail::QueueRuntime rt(o);
  weave::detail::QueueStore& store = rt.state(fresh_queue("misses"))->store();
  const std::int64_t now = store.ticks("report").now_ms;
  auto offer = [&](std::int64_t tick, std::uint64_t missed, std::string_view record) {
    TickOffer extra;
    extra.missed = missed;
    extra.last_run = record;
    return offer_tick(store, "report", tick, extra);
  };
  CHECK(store.ticks("report").missed == 0);
  CHECK(store.ticks("report").last_run.empty());
  REQUIRE(offer(now + 60'000, 3, R"({"outcome":"ran"})"));
  CHECK_FALSE(offer(now + 60'000, 3, ""));  // a second worker's offer of the same tick: its misses are not added
  weave::detail::QueueTicks t = store.ticks("report");
  CHECK(t.missed == 3);
  CHECK(t.last_run == R"({"outcome":"ran"})");
  CHECK_FALSE(offer(now + 60'000, 0, R"({"outcome":"failed"})"));  // not added, the record kept
  t = store.ticks("report");
  CHECK(t.missed == 3);
  CHECK(t.last_run == R"({"outcome":"failed"})");
  REQUIRE(offer(now + 120'000, 2, ""));
  t = store.ticks("report");
  CHECK(t.missed == 5);
  CHECK(t.last_run == R"({"outcome":"failed"})");
  CHECK(t.last_tick_ms == now + 120'000);
}

TEST_CASE("queue: a tick offered on condition is added only while the schedule's last tick is the one it planned from", "[queue][schedule]") {
  weave::QueueOptions o;
  o.url = test_store_url();
  weave::detail::QueueRuntime rt(o);
  weave::detail::QueueStore& store = rt.state(fresh_queue("cas"))->store();
  const std::int64_t now = store.ticks("s").now_ms;
  auto offer = [&](std::int64_t tick, std::int64_t if_last, std::uint64_t missed) {
    TickOffer extra;
    extra.missed = missed;
    extra.if_last_tick = if_last;
    return offer_tick(store, "s", tick, extra);
  };
  // Two workers plan a new schedule at two moments: the first offer wins, the later tick is not added.
  CHECK(offer(now + 1'000, -1, 0));
  CHECK_FALSE(offer(now + 2'000, -1, 7));
  CHECK(store.ticks("s").last_tick_ms == now + 1'000);
  CHECK(store.ticks("s").missed == 0);
  CHECK(offer(now + 2'000, now + 1'000, 1));  // planned from the last tick: added
  CHECK_FALSE(offer(now + 3'000, now + 1'000, 1));
  CHECK(store.ticks("s").missed == 1);
  CHECK(store.ticks("s").live == 2);  // both scheduled, read with the last tick
  // A tick before 0 is never added; an id queued already leaves the schedule as it was.
  CHECK_FALSE(offer(-1, now + 2'000, 0));
  const std::string first_id = std::to_string(now + 1'000);  // the first tick's message, still queued
  weave::detail::QueueOffer taken_id;
  taken_id.id = first_id;
  taken_id.payload = "{}";
  taken_id.schedule = "s";
  taken_id.tick_ms = now + 5'000;
  taken_id.missed = 4;
  CHECK_FALSE(store.offer(taken_id).added);
  CHECK(store.ticks("s").last_tick_ms == now + 2'000);
  CHECK(store.ticks("s").missed == 1);
}
