// fork(): a child forked after its parent used locks, the cache and dedupe
// gets its own connections, threads and token randomness for every feature;
// the parent is unaffected (docs/ARCHITECTURE.md, "fork()"). Run on every
// Redis store (weave_add_store_suite(fork <store>)): the child's claims must be
// seen by the parent through the store.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "fork_service.weave.h"
#include "forked_child.h"
#include "weave/cache.h"
#include "weave/dedupe.h"
#include "weave/error.h"
#include "weave/lock.h"

using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

std::string fresh_dir() {
  std::string pattern = (fs::temp_directory_path() / "weave-fork-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

// A file "started-<pid>" of a process other than this one, once it exists.
bool other_started(const std::string& dir) {
  const std::string mine = "started-" + std::to_string(::getpid());
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("started-", 0) == 0 && name != mine) return true;
  }
  return false;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

TEST_CASE("fork: a child forked after its parent used lock, cache and dedupe keeps its own claim alive while the parent stays busy",
          "[fork]") {
  const std::string url = test_store_url();
  weave::LockOptions lock;
  lock.url = url;
  weave::configure_locks(lock);
  weave::CacheOptions cache;
  cache.url = url;
  weave::configure_cache(cache);
  weave::DedupeOptions dedupe;
  dedupe.url = url;
  dedupe.claim_lease = 600ms;  // the child's body runs 5 leases: only renewals keep its claim
  weave::configure_dedupe(dedupe);

  weave::Woven<forktest::Service> svc;
  const std::string dir = fresh_dir(), warm_dir = fresh_dir();
  const std::string key = "k" + std::to_string(::getpid()) + "-" +
                          std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());

  // The parent uses every feature first: pools hold connections, the dedupe
  // renewer has run (a body longer than the claim lease), the cache's feed is up.
  REQUIRE(svc.bump("parent") == 1);
  REQUIRE(svc.price("abc") == 300);
  REQUIRE(svc.price("abc") == 300);
  REQUIRE(svc.loads == 1);
  REQUIRE(svc.job(key + "-warm", warm_dir, 1000) == ::getpid());

  // A parent thread keeps all three busy across the fork and after it.
  std::atomic<bool> stop{false};
  std::atomic<long> parent_calls{0}, parent_errors{0}, parent_bumps{1};
  std::thread busy([&] {
    for (int i = 0; !stop.load(); ++i) {
      try {
        svc.bump("parent");
        ++parent_bumps;
        if (svc.price("abc") != 300 || svc.price("sku" + std::to_string(i % 50)) != 100 * int(("sku" + std::to_string(i % 50)).size()))
          ++parent_errors;
        ++parent_calls;
      } catch (const std::exception&) {
        ++parent_errors;
      }
    }
  });
  std::this_thread::sleep_for(50ms);

  ForkedChild child([&] {
    ::alarm(30);  // a child stuck on a lock the parent's threads held at fork() dies instead of hanging the test
    std::string out;
    out += svc.job(key, dir, 3000) == ::getpid() ? "job-ran" : "job-wrong";
    const long before = svc.counter.load();  // the parent's count, copied at fork()
    long bumps = 0;
    for (int i = 0; i < 20; ++i) bumps = svc.bump("child");
    out += bumps == before + 20 ? " lock-ok" : " lock-wrong=" + std::to_string(bumps - before);
    out += svc.price("abc") == 300 && svc.price("child") == 500 ? " cache-ok" : " cache-wrong";
    const weave::DedupeStats d = weave::dedupe_stats();
    const weave::CacheStats c = weave::cache_stats("fork-price");
    out += " lost=" + std::to_string(d.claims_lost) + " dedupe-errors=" + std::to_string(d.errors) +
           " cache-errors=" + std::to_string(c.errors);
    return out;
  });

  // While the child's body runs (3 s, five of its claim leases), the
  // parent's duplicates are refused: the child renews its own claim.
  const auto started_wait = std::chrono::steady_clock::now();
  while (!other_started(dir) && std::chrono::steady_clock::now() - started_wait < 10s) std::this_thread::sleep_for(5ms);
  REQUIRE(other_started(dir));
  const auto started = std::chrono::steady_clock::now();
  int refused = 0, ran_here = 0, other = 0;
  while (std::chrono::steady_clock::now() - started < 2400ms) {
    try {
      svc.job(key, dir, 0);
      ++ran_here;
    } catch (const weave::DuplicateInFlight&) {
      ++refused;
    } catch (const std::exception&) {
      ++other;
    }
    std::this_thread::sleep_for(20ms);
  }
  const std::string out = child.wait();
  stop = true;
  busy.join();

  CHECK(ran_here == 0);
  CHECK(other == 0);
  CHECK(refused >= 40);
  CHECK(child.exited_cleanly());
  CHECK(out == "job-ran lock-ok cache-ok lost=0 dedupe-errors=0 cache-errors=0");
  // The job ran once, in the child.
  const auto ran = lines_of(dir + "/ran-" + key);
  CHECK(ran.size() == 1);
  CHECK(ran != std::vector<std::string>{std::to_string(::getpid())});

  // The parent went on unharmed, and still works.
  CHECK(parent_errors == 0);
  CHECK(parent_calls > 0);
  CHECK(svc.counter.load() == parent_bumps.load());
  CHECK(svc.bump("parent") == parent_bumps.load() + 1);
  CHECK(svc.job(key + "-after", dir, 0) == ::getpid());
  CHECK_THROWS_AS(svc.job(key, dir, 0), weave::DuplicateCall);  // the child's completed call answers
  CHECK(weave::cache_stats("fork-price").errors == 0);
  CHECK(weave::dedupe_stats().claims_lost == 0);
  fs::remove_all(dir);
  fs::remove_all(warm_dir);
}
