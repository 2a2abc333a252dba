// A separate process holding / contending for redis locks, driven by
// test_redis_multiprocess.cpp through argv, stdin and stdout lines.
//
//   lock_worker counter <url> <port> <lock key> <counter key> <threads> <iterations>
//   lock_worker hold    <url> <key> <ttl ms (0 = watchdog)> <hold ms> <watchdog lease ms>
//   lock_worker fenced  <url> <port> <key> <watchdog lease ms> <store name>
//   lock_worker tokens  <url> <port> <key> <n> <list key>
//   lock_worker owners  <url> <key> <n>
//   lock_worker try     <url> <key> <wait ms>
//   lock_worker fenced-counter <url> <port> <key> <watchdog lease ms> <store name> <seconds>
//   lock_worker pause   <url> <key> <ttl ms (0 = watchdog)> <watchdog lease ms>
//   lock_worker runaway <url> <id> <watchdog lease ms> <run ms>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "fenced_store.h"
#include "jobs.weave.h"
#include "redis_server.h"
#include "weave/error.h"
#include "weave/lock.h"
#include "worker_lines.h"

using namespace std::chrono_literals;
using std::chrono::milliseconds;

namespace {

// "RELEASE released", or "RELEASE lost" when release() reports a lost lease.
void say_release(weave::LeaseHandle& h) {
  try {
    h.release();
    say("RELEASE released");
  } catch (const weave::LeaseLost&) {
    say("RELEASE lost");
  }
}

weave::LockClient client(const std::string& url, milliseconds lease = 30'000ms) {
  weave::LockOptions o;
  o.url = url;
  o.watchdog_lease = lease;
  return weave::LockClient(o);
}

int counter(char** a) {
  std::string url = a[0];
  int port = std::stoi(a[1]);
  std::string key = a[2], counter_key = a[3];
  int threads = std::stoi(a[4]), iterations = std::stoi(a[5]);
  auto locks = client(url);
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&] {
      redis_test::Raw raw(port);
      for (int i = 0; i < iterations; ++i) {
        auto h = locks.acquire(key, {.wait = weave::forever});
        auto v = raw.cmd({"GET", counter_key});
        long long n = v.nil() ? 0 : std::stoll(v.str);
        raw.cmd({"SET", counter_key, std::to_string(n + 1)});  // not atomic: only the lock protects it
        h.release();
      }
    });
  for (auto& t : ts) t.join();
  say("DONE");
  return 0;
}

int hold(char** a) {
  auto locks = client(a[0], milliseconds(std::stoi(a[4])));
  milliseconds ttl(std::stoi(a[2])), hold_for(std::stoi(a[3]));
  auto h = locks.acquire(a[1], {.ttl = ttl, .wait = 10s});
  say("ACQUIRED " + std::to_string(h->fencing_token()));
  std::this_thread::sleep_for(hold_for);
  try {
    h.release();
    say("RELEASED");
  } catch (const weave::LeaseLost& e) {
    say(std::string("LOST ") + e.what());
  }
  return 0;
}

int fenced(char** a) {
  std::string url = a[0];
  int port = std::stoi(a[1]);
  auto locks = client(url, milliseconds(std::stoi(a[3])));
  auto h = locks.acquire(a[2], {.wait = 10s});
  redis_test::Raw raw(port);
  redis_test::FencedStore store(raw, a[4]);
  store.write(h->fencing_token(), "first holder, before the pause");
  say("ACQUIRED " + std::to_string(h->fencing_token()));
  std::string go;
  std::getline(std::cin, go);  // the test sends a line after SIGCONT
  // A well-behaved holder checks its stop_token; give the watchdog time to run.
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!h->stop_token().stop_requested() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  say(std::string("STOP ") + (h->stop_token().stop_requested() ? "1" : "0"));
  // A stale writer that ignores it anyway: the store must refuse the old token.
  bool ok = store.write(h->fencing_token(), "first holder, after the pause");
  say(std::string("WRITE ") + (ok ? "accepted" : "rejected"));
  say_release(h);
  return 0;
}

int tokens(char** a) {
  std::string url = a[0];
  redis_test::Raw raw(std::stoi(a[1]));
  std::string key = a[2], list = a[4];
  int n = std::stoi(a[3]);
  auto locks = client(url);
  for (int i = 0; i < n; ++i) {
    auto h = locks.acquire(key, {.wait = weave::forever});
    raw.cmd({"RPUSH", list, std::to_string(h->fencing_token())});  // in acquisition order
    say("T " + std::to_string(h->fencing_token()));
    h.release();
  }
  return 0;
}

int owners(char** a) {
  auto locks = client(a[0]);
  int n = std::stoi(a[2]);
  std::string out;
  for (int i = 0; i < n; ++i) {
    auto h = locks.acquire(a[1], {.ttl = 10s});
    out += h->owner_token();
    out += '\n';
    h.release();
  }
  std::cout << out << std::flush;
  return 0;
}

int try_acquire(char** a) {
  auto locks = client(a[0]);
  auto h = locks.try_acquire(a[1], {.ttl = 10s, .wait = milliseconds(std::stoi(a[2]))});
  say(h ? "ACQUIRED" : "BUSY");
  return 0;
}

// Holds a lease and watches it run out across a SIGSTOP / SIGCONT the test
// sends: what the holder sees the moment it runs again, before the watchdog
// thread has had a chance to look (the holder is running, not sleeping, when
// stopped, so it goes first on SIGCONT).
int pause(char** a) {
  auto locks = client(a[0], milliseconds(std::stoi(a[3])));
  auto h = locks.acquire(a[1], {.ttl = milliseconds(std::stoi(a[2])), .wait = 10s});
  say("ACQUIRED " + std::to_string(h->fencing_token()));
  while (h->remaining() > 0ms) {
  }
  // Each accessor call is a fresh look, as a method checking its lease does.
  const bool stop = h->stop_token().stop_requested();
  const bool lost = h->lost();
  say(std::string("SEEN stop=") + (stop ? "1" : "0") + " lost=" + (lost ? "1" : "0") + " cause=" + h->lost_cause());
  say_release(h);
  return 0;
}

// A woven method (jobs.h: max_hold=1s) that ignores its stop token and runs
// for <run ms>: it says when it started and when its stop token fired, then
// what the call reported when it returned.
int runaway(char** a) {
  weave::LockOptions o;
  o.url = a[0];
  o.watchdog_lease = milliseconds(std::stoi(a[2]));
  weave::configure_locks(o);
  weave::Woven<jobs::Jobs> svc;
  const milliseconds run_for(std::stoi(a[3]));
  try {
    svc.runaway(a[1], [&] {
      const weave::Lease* l = weave::current_lease();
      say("RUNNING " + std::to_string(l->fencing_token()));
      const auto until = std::chrono::steady_clock::now() + run_for;
      bool told = false;
      while (std::chrono::steady_clock::now() < until) {
        if (!told && l->stop_token().stop_requested()) {
          told = true;
          say("STOP " + l->lost_cause());  // and carries on regardless
        }
        std::this_thread::sleep_for(5ms);
      }
    });
    say("RETURNED");
  } catch (const weave::HoldLimitExceeded& e) {
    say(std::string("HOLD_LIMIT retryable=") + (e.retryable() ? "1" : "0") +
        " max_hold=" + std::to_string(e.max_hold().count()) + " " + e.what());
  }
  return 0;
}

}  // namespace

// Increments a fenced counter under the lock until the time is up. Every
// access presents the lease's fencing token: the read raises the store's
// newest token, the write is refused if a newer holder has touched the store
// since. A process the soak test stops past its lease comes back with a stale
// read; its write is refused, so no increment is lost (value == accepted).
int fenced_counter(char** a) {
  static const char* read_script = R"lua(
local newest = tonumber(redis.call('GET', KEYS[2]) or '0')
if tonumber(ARGV[1]) < newest then return -1 end
redis.call('SET', KEYS[2], ARGV[1])
return tonumber(redis.call('GET', KEYS[1]) or '0')
)lua";
  static const char* write_script = R"lua(
local newest = tonumber(redis.call('GET', KEYS[2]) or '0')
if tonumber(ARGV[1]) < newest then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('INCR', KEYS[3])
return 1
)lua";
  std::string url = a[0];
  int port = std::stoi(a[1]);
  std::string key = a[2], store = a[4];
  auto locks = client(url, milliseconds(std::stoi(a[3])));
  redis_test::Raw raw(port);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(std::stoi(a[5]));
  long accepted = 0, rejected = 0, lost = 0;
  while (std::chrono::steady_clock::now() < until) {
    auto h = locks.acquire(key, {.wait = weave::forever});
    const std::string token = std::to_string(h->fencing_token());
    const long long n = raw.cmd({"EVAL", read_script, "2", store + ":value", store + ":newest", token}).integer;
    if (n >= 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(n % 3));  // widen the window
      const bool ok = raw.cmd({"EVAL", write_script, "3", store + ":value", store + ":newest",
                               store + ":accepted", token, std::to_string(n + 1)})
                          .integer == 1;
      ok ? ++accepted : ++rejected;
    } else {
      ++rejected;
    }
    try {
      h.release();
    } catch (const weave::LeaseLost&) {
      ++lost;
    }
  }
  say("DONE accepted=" + std::to_string(accepted) + " rejected=" + std::to_string(rejected) +
      " lost=" + std::to_string(lost));
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  std::string mode = argv[1];
  char** a = argv + 2;
  int n = argc - 2;
  try {
    if (mode == "counter" && n == 6) return counter(a);
    if (mode == "hold" && n == 5) return hold(a);
    if (mode == "fenced" && n == 5) return fenced(a);
    if (mode == "tokens" && n == 5) return tokens(a);
    if (mode == "owners" && n == 3) return owners(a);
    if (mode == "try" && n == 3) return try_acquire(a);
    if (mode == "fenced-counter" && n == 6) return fenced_counter(a);
    if (mode == "pause" && n == 4) return pause(a);
    if (mode == "runaway" && n == 4) return runaway(a);
  } catch (const std::exception& e) {
    say(std::string("ERROR ") + e.what());
    return 1;
  }
  std::cerr << "lock_worker: bad arguments\n";
  return 2;
}
