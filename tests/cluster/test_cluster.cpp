// redis+cluster:// against a real 3-master Redis Cluster: slot hashing, keys
// spread over nodes, batched renewal across nodes, MOVED and ASK redirects
// during a slot migration, waiting with sharded Pub/Sub.
#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "event_recorder.h"
#include "fault_proxy.h"
#include "lock/redis/backends.h"
#ifdef WEAVE_TEST_ASYNC
#include "store/asio/async_run.h"
#include "weave/asio.h"
#endif
#include "store/cluster_executor.h"
#include "store/open.h"
#include "store/subscriber.h"
#include "cluster_fixture.h"
#include "weave/error.h"
#include "weave/lock.h"
#include "weave/lock_backend.h"

using namespace std::chrono_literals;
using cluster_test::Cluster;
using Clock = std::chrono::steady_clock;

namespace {

struct Client {
  std::shared_ptr<weave::store::ClusterExecutor> exec;
  std::shared_ptr<weave::LockBackend> backend;
  weave::LockClient locks;
};

Client make_client(weave::LockOptions o = {}) {
  o.url = Cluster::shared().url();
  o.command_timeout = 5s;
  auto exec = std::dynamic_pointer_cast<weave::store::ClusterExecutor>(
      weave::store::open_executor(o.url, weave::store::connection_settings(o)));
  auto backend = weave::lock_redis::make_script_backend(exec, o);
  return Client{exec, backend, weave::LockClient(o, backend)};
}

std::string lease_key(const std::string& key) { return "{weave:lock:" + key + "}"; }

std::string next_key(const std::string& name) {
  static std::atomic<int> n{0};
  static const std::string run = std::to_string(::getpid());
  return "cluster-test:" + run + ":" + name + ":" + std::to_string(n.fetch_add(1));
}

// The node indexes holding `redis_key`.
std::vector<std::size_t> holders(const std::string& redis_key) {
  std::vector<std::size_t> out;
  auto& c = Cluster::shared();
  for (std::size_t i = 0; i < c.size(); ++i) {
    auto raw = c.node(i).client();
    raw.cmd({"READONLY"});
    redisReply* r = static_cast<redisReply*>(redisCommand(raw.context(), "EXISTS %b", redis_key.data(), redis_key.size()));
    bool here = r && r->type == REDIS_REPLY_INTEGER && r->integer == 1;  // MOVED errors elsewhere
    if (r) freeReplyObject(r);
    if (here) out.push_back(i);
  }
  return out;
}

}  // namespace

TEST_CASE("cluster: key slots match CLUSTER KEYSLOT, hash tags included", "[cluster]") {
  auto& c = Cluster::shared();
  for (std::string k : {"", "a", "order:1", "{user1000}.following", "foo{}{bar}", "foo{{bar}}zap", "foo{bar}{zap}",
                        "{weave:lock:order:1}", "{weave:lock:order:1}:fence", "{weave:lock:order:1}:released",
                        "123456789"}) {
    INFO(k);
    REQUIRE(weave::store::key_slot(k) == static_cast<unsigned>(c.slot_of(k)));
  }
  REQUIRE(weave::store::key_slot("123456789") == (0x31C3 % 16384));  // the CRC16/XMODEM check value
}

TEST_CASE("cluster: keys land on different nodes and one renewal batch spans them", "[cluster]") {
  auto& c = Cluster::shared();
  auto cl = make_client();
  std::vector<std::string> keys;
  std::vector<weave::LeaseHandle> held;
  std::set<std::size_t> nodes;
  for (int i = 0; i < 30; ++i) {
    keys.push_back(next_key("spread"));
    held.push_back(cl.locks.acquire(keys.back(), {.ttl = 20s}));
    auto where = holders(lease_key(keys.back()));
    REQUIRE(where.size() == 1);
    REQUIRE(where[0] == c.owner(c.slot_of(lease_key(keys.back()))));
    nodes.insert(where[0]);
  }
  REQUIRE(nodes.size() == 3);
  // One renew_batch over all of them: grouped per slot, one pipeline per node.
  std::vector<weave::RenewItem> items;
  for (auto& h : held) items.push_back({h->key(), h->owner_token(), 20s});
  auto renewed = cl.backend->renew_batch(items);
  REQUIRE(renewed == std::vector<weave::RenewResult>(items.size(), weave::RenewResult::owned));
  items[3].owner_token = "not-the-owner";
  renewed = cl.backend->renew_batch(items);
  REQUIRE(renewed[3] == weave::RenewResult::lost);
  REQUIRE(renewed[4] == weave::RenewResult::owned);
  for (auto& h : held) h.release();
  for (auto& k : keys) REQUIRE(holders(lease_key(k)).empty());
}

// A master that stops answering (SIGSTOP) may have run the request: it is
// not sent again (that would hold the caller another command timeout per
// round), and the caller gets the TimeoutError after one.
TEST_CASE("cluster: a request a master did not answer in time ends with TimeoutError after one command timeout",
          "[cluster]") {
  auto& c = Cluster::shared();
  weave::LockOptions o;
  o.url = c.url();
  o.command_timeout = 500ms;
  weave::LockClient locks(o);
  const std::string key = next_key("hung");
  locks.try_acquire(key, {.ttl = 1s});  // warm: the map read, a connection to the key's master
  auto& master = c.node(c.owner(c.slot_of(lease_key(key))));
  ::kill(master.pid(), SIGSTOP);
  const auto start = Clock::now();
  CHECK_THROWS_AS(locks.try_acquire(key, {.ttl = 1s}), weave::TimeoutError);
  const auto waited = Clock::now() - start;
  ::kill(master.pid(), SIGCONT);
  CHECK(waited < 2000ms);  // one command timeout (500 ms), not one per round (5: 2.5 s and more)
}

TEST_CASE("cluster: the watchdog keeps leases on every node alive", "[cluster]") {
  weave::LockOptions o;
  o.watchdog_lease = 600ms;
  auto cl = make_client(o);
  std::vector<weave::LeaseHandle> held;
  for (int i = 0; i < 12; ++i) held.push_back(cl.locks.acquire(next_key("watchdog")));
  std::this_thread::sleep_for(1500ms);  // 2.5 leases
  for (auto& h : held) {
    REQUIRE_FALSE(h->lost());
    REQUIRE_NOTHROW(h.release());
  }
}

TEST_CASE("cluster: a migrated slot is followed through MOVED, and ASK and TRYAGAIN during a migration", "[cluster]") {
  auto& c = Cluster::shared();
  auto cl = make_client();
  auto waiter_client = make_client();
  const std::string key = next_key("moved");
  const long long slot = c.slot_of(lease_key(key));
  const std::size_t from = c.owner(slot), to = (from + 1) % c.size();

  auto h = cl.locks.acquire(key, {.ttl = 10s});
  const std::uint64_t before = h->fencing_token();
  h.release();
  REQUIRE(waiter_client.exec->node_of(static_cast<unsigned>(slot)) == c.name(from));  // both maps read

  c.migrate(slot, from, to);  // the lease key's counter moves along
  const auto moved_before = cl.exec->moved();
  h = cl.locks.acquire(key, {.ttl = 10s});
  REQUIRE(cl.exec->moved() > moved_before);
  REQUIRE(cl.exec->node_of(static_cast<unsigned>(slot)) == c.name(to));
  REQUIRE(holders(lease_key(key)) == std::vector<std::size_t>{to});
  REQUIRE(h->fencing_token() > before);

  // A client whose map still names the old node waits (SSUBSCRIBE is refused
  // with MOVED there: it re-reads the map) and is woken by the release.
  std::thread releaser([&] {
    std::this_thread::sleep_for(300ms);
    h.release();
  });
  const auto start = Clock::now();
  auto h2 = waiter_client.locks.acquire(key, {.ttl = 10s, .wait = 10s});
  const auto took = Clock::now() - start;
  releaser.join();
  REQUIRE(h2);
  REQUIRE(took < 5s);  // the release woke it (the holder's ttl was 10 s)
  h2.release();

  // ASK: the lease of a slot in the middle of a migration has already moved
  // to the target; its release is redirected there with ASK.
  std::string other;
  long long slot2 = -1;
  for (int i = 0; i < 1000 && slot2 < 0; ++i) {
    other = next_key("ask");
    long long s = c.slot_of(lease_key(other));
    if (c.owner(s) == from && c.node(from).client().cmd({"CLUSTER", "COUNTKEYSINSLOT", std::to_string(s)}).integer == 0)
      slot2 = s;
  }
  REQUIRE(slot2 >= 0);
  const std::string s2 = std::to_string(slot2);
  auto h3 = cl.locks.acquire(other, {.ttl = 10s});
  REQUIRE(cl.exec->node_of(static_cast<unsigned>(slot2)) == c.name(from));
  c.node(to).client().cmd({"CLUSTER", "SETSLOT", s2, "IMPORTING", c.id(from)});
  c.node(from).client().cmd({"CLUSTER", "SETSLOT", s2, "MIGRATING", c.id(to)});
  c.node(from).client().cmd({"MIGRATE", "127.0.0.1", std::to_string(c.node(to).port()), "", "0", "5000", "KEYS",
                             lease_key(other), lease_key(other) + ":fence"});
  const auto asked_before = cl.exec->asked();
  REQUIRE_NOTHROW(h3.release());
  REQUIRE(cl.exec->asked() > asked_before);
  REQUIRE(cl.exec->node_of(static_cast<unsigned>(slot2)) == c.name(from));  // ASK does not change the map
  REQUIRE(holders(lease_key(other)).empty());
  // A multi-key acquire during the migration gets TRYAGAIN (the counter is
  // on the target, the lease nowhere) and is retried until the slot settles.
  std::string finish_error;
  std::thread finisher([&] {
    std::this_thread::sleep_for(300ms);
    try {
      c.finish(slot2, to);
    } catch (const std::exception& e) {
      finish_error = e.what();
    }
  });
  weave::LeaseHandle h4;
  std::string acquire_error;
  try {
    h4 = cl.locks.acquire(other, {.ttl = 10s});
  } catch (const std::exception& e) {
    acquire_error = e.what();
  }
  finisher.join();
  REQUIRE(acquire_error == "");
  REQUIRE(finish_error.empty());
  REQUIRE(holders(lease_key(other)) == std::vector<std::size_t>{to});
  // The acquire may have ended through an ASK (the keys moved before the slot
  // was handed over), which leaves the map alone; the release after the
  // hand-over is MOVED, and the map follows.
  h4.release();
  REQUIRE(cl.exec->node_of(static_cast<unsigned>(slot2)) == c.name(to));
}

// While a slot's new owner has not learned of it yet, the old owner sends the
// slot's callers there and the new owner sends them back. The call waits
// until the nodes agree (up to the command timeout), not a fixed number of
// redirects; when they never agree, the caller gets an IoError naming the
// redirect once the command timeout has passed.
TEST_CASE("cluster: two nodes that send a slot's callers to each other delay the call until they agree", "[cluster]") {
  auto& c = Cluster::shared();
  auto cl = make_client();  // command timeout 5 s
  std::string key;
  long long slot = -1;
  for (int i = 0; i < 1000 && slot < 0; ++i) {
    key = next_key("disagree");
    const long long s = c.slot_of(lease_key(key));
    if (c.node(c.owner(s)).client().cmd({"CLUSTER", "COUNTKEYSINSLOT", std::to_string(s)}).integer == 0) slot = s;
  }
  REQUIRE(slot >= 0);
  const std::string s = std::to_string(slot);
  const std::size_t from = c.owner(slot), to = (from + 1) % c.size();
  REQUIRE(cl.exec->node_of(static_cast<unsigned>(slot)) == c.name(from));  // the map is read
  // Only the old owner hands the slot over (it holds no key of it).
  c.node(from).client().cmd({"CLUSTER", "SETSLOT", s, "NODE", c.id(to)});

  weave::LockOptions briefly;
  briefly.url = c.url();
  briefly.command_timeout = 1s;
  weave::LockClient impatient(briefly);
  try {
    impatient.try_acquire(key, {.ttl = 1s});
    FAIL("acquired while no node serves the slot");
  } catch (const weave::IoError& e) {
    CHECK_THAT(e.what(), Catch::Contains("still redirected") && Catch::Contains("MOVED " + s));
  }

  std::thread others_learn([&] {
    std::this_thread::sleep_for(1s);  // long enough for more than 5 redirects on a loaded machine
    for (std::size_t n = 0; n < c.size(); ++n)
      if (n != from) c.node(n).client().cmd({"CLUSTER", "SETSLOT", s, "NODE", c.id(to)});
  });
  const auto moved_before = cl.exec->moved();
  weave::LeaseHandle h;
  std::string error;
  try {
    h = cl.locks.acquire(key, {.ttl = 10s});
  } catch (const std::exception& e) {
    error = e.what();
  }
  others_learn.join();
  c.wait_ok();
  CHECK(error == "");
  CHECK(cl.exec->moved() - moved_before > 5);  // more redirects than a fixed count of rounds allows
  CHECK(holders(lease_key(key)) == std::vector<std::size_t>{to});
  if (h) h.release();
}

#ifdef WEAVE_TEST_ASYNC  // (the async component: store/asio/async_run.h)
TEST_CASE("cluster: a direct asynchronous send that meets MOVED leaves the call to run(), which follows it",
          "[cluster]") {
  auto& c = Cluster::shared();
  auto cl = make_client();
  const std::string key = next_key("direct-moved");
  const long long slot = c.slot_of(key);
  const std::size_t from = c.owner(slot), to = (from + 1) % c.size();
  static const char kIncr[] = "return redis.call('INCRBY', KEYS[1], ARGV[1])";
  const std::vector<weave::store::ScriptCall> one{weave::store::ScriptCall{kIncr, {key}, {"1"}}};
  // One asynchronous send of `one` on an io_context run by this thread.
  auto send_async = [&] {
    weave::net::io_context io;
    std::optional<std::vector<weave::store::Reply>> replies;
    std::exception_ptr error;
    weave::net::co_spawn(
        io, [&]() -> weave::net::awaitable<void> { replies = co_await weave::store::try_run_async(*cl.exec, one, "incr"); },
        [&](std::exception_ptr e) { error = e; });
    io.run();
    if (error) std::rethrow_exception(error);
    return replies;
  };
  REQUIRE(cl.exec->run(one, "incr").front()->integer == 1);  // the map read, the script loaded on that node
  const auto sent = send_async();
  REQUIRE(sent);
  CHECK(sent->front()->integer == 2);

  c.migrate(slot, from, to);
  const auto moved_before = cl.exec->moved();
  const auto after_move = send_async();
  CHECK_FALSE(after_move);                       // MOVED: not run there, left to run()
  CHECK(cl.exec->moved() == moved_before);       // the direct send follows nothing itself
  CHECK(cl.exec->run(one, "incr").front()->integer == 3);  // run() follows it: the key counted once more
  CHECK(cl.exec->moved() > moved_before);
  REQUIRE(cl.exec->node_of(static_cast<unsigned>(slot)) == c.name(to));
}
#endif  // WEAVE_TEST_ASYNC

TEST_CASE("cluster: plain commands and scripts on a key already moved mid-migration follow ASK and sharded Pub/Sub stays on the source", "[cluster]") {
  auto& c = Cluster::shared();
  weave::store::ConnectionSettings settings;
  settings.command_timeout = 5s;
  auto exec = std::dynamic_pointer_cast<weave::store::ClusterExecutor>(weave::store::open_executor(c.url(), settings));
  REQUIRE(exec);
  // A hash tag whose slot holds no other key (nothing else moves with it).
  std::string tag;
  long long slot = -1;
  for (int i = 0; i < 1000 && slot < 0; ++i) {
    tag = next_key("ask-command");
    const long long s = c.slot_of("{" + tag + "}");
    if (c.node(c.owner(s)).client().cmd({"CLUSTER", "COUNTKEYSINSLOT", std::to_string(s)}).integer == 0) slot = s;
  }
  REQUIRE(slot >= 0);
  const std::string entry = "{" + tag + "}:entry", claim = "{" + tag + "}:claim", absent = "{" + tag + "}:absent",
                    channel = "{" + tag + "}:done", s = std::to_string(slot);
  const std::size_t from = c.owner(slot), to = (from + 1) % c.size();
  using weave::store::Command;
  auto text = [](const weave::store::Reply& r) { return std::string(r->str, r->len); };
  REQUIRE(text(exec->command(Command{"SET", entry, "v1"}, entry, "test set")) == "OK");
  REQUIRE(exec->node_of(static_cast<unsigned>(slot)) == c.name(from));

  // The slot is MIGRATING on `from`, IMPORTING on `to`, and `entry` already moved:
  // `from` answers ASK for it (and for every key it does not have).
  c.node(to).client().cmd({"CLUSTER", "SETSLOT", s, "IMPORTING", c.id(from)});
  c.node(from).client().cmd({"CLUSTER", "SETSLOT", s, "MIGRATING", c.id(to)});
  c.node(from).client().cmd({"MIGRATE", "127.0.0.1", std::to_string(c.node(to).port()), "", "0", "5000", "KEYS", entry});
  // The importing node serves the slot's keys only after ASKING.
  auto on_target = [&](const std::string& key) {
    auto raw = c.node(to).client();
    raw.cmd({"ASKING"});
    return raw.cmd({"EXISTS", key}).integer == 1;
  };
  REQUIRE(on_target(entry));
  const auto asked_before = exec->asked(), moved_before = exec->moved();

  // The cache's read: one GET.
  std::string error;
  try {
    const weave::store::Reply r = exec->command(Command{"GET", entry}, entry, "cache get");
    CHECK(r->type == REDIS_REPLY_STRING);
    CHECK(text(r) == "v1");
    const weave::store::Reply miss = exec->command(Command{"GET", absent}, absent, "cache get");
    CHECK(miss->type == REDIS_REPLY_NIL);
    // Dedupe's claim: SET NX PX GET, on the moved key (found) and on a new one
    // (set, on the importing node: that is where the slot's keys go).
    const weave::store::Reply found = exec->command(Command{"SET", entry, "v2", "NX", "PX", "60000", "GET"}, entry, "claim");
    CHECK(text(found) == "v1");
    const weave::store::Reply set = exec->command(Command{"SET", claim, "c1", "NX", "PX", "60000", "GET"}, claim, "claim");
    CHECK(set->type == REDIS_REPLY_NIL);
    const weave::store::Reply again = exec->command(Command{"SET", claim, "c2", "NX", "PX", "60000", "GET"}, claim, "claim");
    CHECK(text(again) == "c1");
  } catch (const std::exception& e) {
    error = e.what();
  }
  REQUIRE(error == "");
  CHECK(on_target(claim));
  CHECK(exec->asked() >= asked_before + 5);
  CHECK(exec->moved() == moved_before);
  CHECK(exec->node_of(static_cast<unsigned>(slot)) == c.name(from));  // ASK leaves the map alone

  // A pipeline of scripts, one on the moved key and one on a key of another
  // node, answered in order.
  static const char* const get_script = "return redis.call('GET', KEYS[1])";
  std::string elsewhere;
  for (int i = 0; i < 1000; ++i) {
    elsewhere = next_key("ask-elsewhere");
    if (c.owner(c.slot_of(elsewhere)) != from && c.owner(c.slot_of(elsewhere)) != to) break;
  }
  REQUIRE(text(exec->command(Command{"SET", elsewhere, "e1"}, elsewhere, "test set")) == "OK");
  std::vector<weave::store::ScriptCall> calls = {{get_script, {entry}, {}}, {get_script, {elsewhere}, {}}};
  const auto replies = exec->run(calls, "test get");
  REQUIRE(replies.size() == 2);
  CHECK(text(replies[0]) == "v1");
  CHECK(text(replies[1]) == "e1");

  // Sharded Pub/Sub gets no ASK (Redis 7.0): the channel is served by the
  // source until the slot is handed over.
  auto bell = std::make_shared<weave::store::Bell>();
  auto interest = exec->subscribe(channel, bell);
  CHECK(exec->publish(channel, "during") == 1);
  CHECK(interest->wait_until(Clock::now() + 5s));

  // The hand-over: the source drops the shard subscription (sunsubscribe,
  // the waiter wakes), a new subscription and a publish follow MOVED to `to`
  // with the client's map still naming `from`.
  c.finish(slot, to);
  CHECK(interest->wait_until(Clock::now() + 5s));
  CHECK(exec->node_of(static_cast<unsigned>(slot)) == c.name(from));
  auto after = exec->subscribe(channel, bell);
  CHECK(exec->moved() > moved_before);
  CHECK(exec->node_of(static_cast<unsigned>(slot)) == c.name(to));
  CHECK(exec->publish(channel, "after") == 1);
  CHECK(after->wait_until(Clock::now() + 5s));
  CHECK(text(exec->command(Command{"GET", entry}, entry, "cache get")) == "v1");
}

TEST_CASE("cluster: waiters on keys of different nodes are woken by their releases", "[cluster]") {
  auto holder = make_client(), waiter = make_client();
  std::vector<std::string> keys;
  for (int i = 0; i < 6; ++i) keys.push_back(next_key("wake"));
  std::vector<weave::LeaseHandle> held;
  for (auto& k : keys) held.push_back(holder.locks.acquire(k, {.ttl = 30s}));
  std::atomic<int> got{0};
  std::vector<std::thread> ts;
  const auto start = Clock::now();
  for (auto& k : keys)
    ts.emplace_back([&, k] {
      auto h = waiter.locks.try_acquire(k, {.ttl = 5s, .wait = 15s});
      if (h) ++got;
    });
  std::this_thread::sleep_for(300ms);
  for (auto& h : held) h.release();
  for (auto& t : ts) t.join();
  REQUIRE(got == 6);
  REQUIRE(Clock::now() - start < 10s);
}

// Redis 7 answers MOVED to an SUNSUBSCRIBE whose slot the node has given
// away (it dropped that subscription itself when the slot left). Replies
// come in order, so that MOVED sits where the answer to an SSUBSCRIBE sent
// just after it is awaited: it must not be taken as that one's refusal. The
// proxy in front of the node holds both commands until the slot has moved.
TEST_CASE("cluster: a MOVED answer to an SUNSUBSCRIBE is not taken as the refusal of the SSUBSCRIBE after it",
          "[cluster]") {
  auto& c = Cluster::shared();
  // Two channels on one node, in different slots.
  std::string gone, stays;
  std::size_t node = 0;
  for (int i = 0; stays.empty(); ++i) {
    const std::string name = next_key("sunsub");
    if (gone.empty()) {
      gone = name;
      node = c.owner(c.slot_of(gone));
    } else if (c.owner(c.slot_of(name)) == node && c.slot_of(name) != c.slot_of(gone)) {
      stays = name;
    }
  }
  const long long slot = c.slot_of(gone);
  const std::size_t elsewhere = (node + 1) % c.size();
  fault_test::FaultProxy proxy(c.node(node).port());
  weave::store::Endpoint ep;
  ep.host = "127.0.0.1";
  ep.port = proxy.port();
  ep.command_timeout = 10s;
  weave::store::Subscriber sub(ep, /*sharded=*/true);
  { auto idle = sub.subscribe(gone); }  // confirmed, then nobody waits on it
  proxy.black_hole(true);
  std::this_thread::sleep_for(3500ms);  // the idle channel's SUNSUBSCRIBE goes out (after 2 s idle) into the hole
  std::string outcome;
  std::thread subscriber([&] {
    try {
      auto interest = sub.subscribe(stays);
      outcome = "subscribed";
    } catch (const std::exception& e) {
      outcome = std::string("error: ") + e.what();
    }
  });
  std::this_thread::sleep_for(300ms);  // its SSUBSCRIBE waits behind the SUNSUBSCRIBE
  c.migrate(slot, node, elsewhere);
  proxy.black_hole(false);
  subscriber.join();
  c.migrate(slot, elsewhere, node);
  INFO("SSUBSCRIBE " << stays << " after SUNSUBSCRIBE " << gone << ": " << outcome);
  CHECK(proxy.seen("SUNSUBSCRIBE") == 1);
  CHECK(outcome == "subscribed");
}

// A slot that moves while a waiter's SSUBSCRIBE is answered: the node
// confirms the subscription, then drops it with `sunsubscribe` as the slot
// leaves (the proxy holds both until the slot has moved, so they are read
// together). The waiter needs no confirmation, only a wake-up: it gets its
// subscription, woken at once to look again (and to subscribe anew where the
// slot went), not a TimeoutError after waiting out its command timeout.
TEST_CASE("cluster: a subscription dropped by a slot move right after its confirmation wakes its waiter, no error",
          "[cluster]") {
  auto& c = Cluster::shared();
  const std::string name = next_key("dropped-sub");
  const long long slot = c.slot_of(name);
  const std::size_t node = c.owner(slot), elsewhere = (node + 1) % c.size();
  fault_test::FaultProxy proxy(c.node(node).port());
  weave::store::Endpoint ep;
  ep.host = "127.0.0.1";
  ep.port = proxy.port();
  ep.connect_timeout = 1s;
  ep.command_timeout = 4s;
  weave::store::Subscriber sub(ep, /*sharded=*/true);
  proxy.delay_reply("SSUBSCRIBE", 1500ms);  // the confirmation, and all after it on that connection
  std::string outcome;
  bool woken = false;
  const auto start = std::chrono::steady_clock::now();  // (the error came after connect + command timeout: 5 s)
  std::thread subscriber([&] {
    try {
      auto interest = sub.subscribe(name);
      outcome = "subscribed";
      // The drop is news to it: it came with the confirmation, read right after it.
      woken = interest->wait_until(std::chrono::steady_clock::now() + 1s);
    } catch (const std::exception& e) {
      outcome = std::string("error: ") + e.what();
    }
  });
  std::this_thread::sleep_for(500ms);  // its SSUBSCRIBE is confirmed, the answer held
  c.migrate(slot, node, elsewhere);    // the node drops the subscription: sunsubscribe, held too
  subscriber.join();
  const auto waited = std::chrono::steady_clock::now() - start;
  c.migrate(slot, elsewhere, node);
  INFO("SSUBSCRIBE " << name << ": " << outcome << " after "
                     << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count() << " ms");
  CHECK(outcome == "subscribed");
  CHECK(woken);
}

TEST_CASE("cluster: bad URLs are configuration errors", "[cluster]") {
  weave::LockOptions o;
  o.url = "redis+cluster://127.0.0.1:1/3";
  REQUIRE_THROWS_AS(weave::LockClient(o), weave::ConfigError);
  o.url = "redis+cluster://127.0.0.1:1,";
  REQUIRE_THROWS_AS(weave::LockClient(o), weave::ConfigError);
}

TEST_CASE("cluster: counters under keys on every master stay exact while a slot migrates mid-run", "[cluster]") {
  auto& c = Cluster::shared();
  // One lock key per master; the counters live in this process (only the locks protect them).
  std::vector<std::string> keys(c.size());
  std::vector<bool> found(c.size(), false);
  for (int i = 0; i < 1000 && std::count(found.begin(), found.end(), true) < static_cast<long>(c.size()); ++i) {
    std::string k = next_key("mcounter");
    std::size_t n = c.owner(c.slot_of(lease_key(k)));
    if (!found[n]) {
      found[n] = true;
      keys[n] = k;
    }
  }
  REQUIRE(std::count(found.begin(), found.end(), true) == static_cast<long>(c.size()));
  const long long slot = c.slot_of(lease_key(keys[0]));
  const std::size_t from = c.owner(slot), to = (from + 1) % c.size();
  auto cl = make_client();
  constexpr int kThreads = 6, kIterations = 400;
  std::vector<long> counters(keys.size(), 0);
  std::atomic<int> errors{0}, done{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      try {
        for (int i = 0; i < kIterations; ++i) {
          const std::size_t k = static_cast<std::size_t>((t + i) % static_cast<int>(keys.size()));
          auto h = cl.locks.acquire(keys[k], {.wait = 30s});
          long v = counters[k];
          std::this_thread::yield();
          counters[k] = v + 1;
          h.release();
          ++done;
        }
      } catch (const std::exception& e) {
        ++errors;
        WARN(e.what());
      }
    });
  while (done < kThreads * kIterations / 4) std::this_thread::sleep_for(1ms);
  const auto moved_before = cl.exec->moved() + cl.exec->asked();
  c.migrate(slot, from, to);  // during the run: MOVED / ASK for keys[0]'s slot
  const int done_after_migration = done;
  for (auto& t : ts) t.join();
  CHECK(done_after_migration < kThreads * kIterations);  // the slot really moved mid-run
  CHECK(errors == 0);
  long total = 0;
  for (long v : counters) total += v;
  CHECK(total == kThreads * kIterations);
  // Each key's counter is exactly the number of increments it was given.
  for (std::size_t k = 0; k < keys.size(); ++k) {
    long expected = 0;
    for (int t = 0; t < kThreads; ++t)
      for (int i = 0; i < kIterations; ++i) expected += (t + i) % static_cast<int>(keys.size()) == static_cast<int>(k);
    CHECK(counters[k] == expected);
  }
  CHECK(cl.exec->node_of(static_cast<unsigned>(slot)) == c.name(to));
  CHECK(cl.exec->moved() + cl.exec->asked() > moved_before);  // the client was redirected
  CHECK(done == kThreads * kIterations);
}

// A long-lived client must not keep every node it ever talked to: a master
// that serves no slot any more (here a failover made it a replica) is
// dropped from the client's nodes at the next map read, with its connections
// (which also means no child process holds them: the replica's redis-server
// was forked after the client connected).
TEST_CASE("cluster: a master that stopped serving slots is dropped from the client with its connections",
          "[cluster]") {
  Cluster c;  // its own: the topology changes
  weave::store::ConnectionSettings settings;
  settings.command_timeout = 5s;
  auto exec = std::dynamic_pointer_cast<weave::store::ClusterExecutor>(weave::store::open_executor(c.url(), settings));
  REQUIRE(exec);
  const std::string key = "{" + next_key("drop") + "}";
  const std::size_t master = c.owner(c.slot_of(key));
  auto clients_on = [&](std::size_t node) {  // normal connections, the asking one included
    const std::string list = c.node(node).client().cmd({"CLIENT", "LIST", "TYPE", "normal"}).str;
    return std::count(list.begin(), list.end(), '\n');
  };
  exec->command(weave::store::Command{"SET", key, "1"}, key, "test");
  auto has = [](const std::vector<std::string>& names, const std::string& n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };
  REQUIRE(has(exec->node_names(), c.name(master)));
  REQUIRE(clients_on(master) >= 2);  // the client's pooled connection, and the one asking
  const std::size_t replica = c.add_replica_of(master);
  c.failover(replica);
  // MOVED: the map is read again, without the old master.
  const weave::store::Reply got = exec->command(weave::store::Command{"GET", key}, key, "test");
  CHECK(std::string(got->str, got->len) == "1");
  const auto names = exec->node_names();
  INFO("client's nodes now: " << names.size());
  CHECK_FALSE(has(names, c.name(master)));
  CHECK(has(names, c.name(replica)));
  CHECK(names.size() == 3);
  // Only the one asking (the server reads the closed sockets at its next turn).
  long on_master = 0;
  for (const auto until = Clock::now() + 5s; (on_master = clients_on(master)) != 1 && Clock::now() < until;)
    std::this_thread::sleep_for(10ms);
  INFO(c.node(master).client().cmd({"CLIENT", "LIST", "TYPE", "normal"}).str);
  CHECK(on_master == 1);
}

TEST_CASE("cluster: a held lease survives a manual failover of its master, and fencing goes on from the replica",
          "[cluster]") {
  Cluster c;  // its own: the topology changes
  weave::LockOptions o;
  o.url = c.url();
  o.watchdog_lease = 1000ms;  // renewed every ~333 ms, through the failover
  o.command_timeout = 5s;
  weave::LockClient locks(o), other(o);
  const std::string key = next_key("failover");
  const std::size_t master = c.owner(c.slot_of(lease_key(key)));
  const std::size_t replica = c.add_replica_of(master);
  auto h = locks.acquire(key);
  const std::uint64_t before = h->fencing_token();

  EventRecorder followed({weave::EventKind::failover_followed});
  c.failover(replica);  // the old master now answers MOVED for the slot
  REQUIRE(c.owner(c.slot_of(lease_key(key))) == replica);
  std::this_thread::sleep_for(1500ms);  // 1.5 leases: renewals went to the new master
  CHECK_FALSE(h->lost());
  CHECK(followed.keys() == std::vector<std::string>{c.name(replica)});
  CHECK_FALSE(other.try_acquire(key));  // still held, now on the new master
  CHECK_NOTHROW(h.release());
  auto next = other.acquire(key, {.wait = 5s});
  CHECK(next->fencing_token() > before);  // the counter came over with the data
  next.release();
}
