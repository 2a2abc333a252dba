// One process of the resharding test (test_reshard.cpp): [[lock]], [[cache]]
// and [[dedupe]] calls on keys the test placed in the slots it moves (and
// elsewhere), while redis-cli --cluster reshard moves those slots back and
// forth. The methods are the shapes the other workers use: jobs::Jobs
// (tests/redis/jobs.h, woven by weavegen), cache_test::Catalog
// (tests/cache/cache_methods.h), dedupe_test::Payments
// (tests/dedupe/dedupe_methods.h).
//
//   reshard_worker <cluster url> <dir> <keys file> <threads> <dedupe period ms>
//
// <keys file>, one "<kind> <name>" per line: `prefix` the cache key_prefix,
// `counter` a counter guarded by a [[lock]], `cache` a [[cache]] key,
// `dedupe` the [[dedupe]] keys, one per period, in order.
//
// Prints READY once configured, then waits for "go <CLOCK_MONOTONIC ns>" and
// from that moment runs <threads> threads until it reads "stop" (or its
// input ends), each looping:
//   - one counter: jobs::Jobs::queued(<name>) ([[lock(key="job:<id>",
//     wait=30s)]]) reads <dir>/<name>, waits 200 us and writes it + 1: only
//     the lock keeps the increments exact;
//   - three cache calls on name "reshard": mostly find with tier=remote (one
//     GET each), some find through both tiers, some remove ([[cache_evict]]),
//     a few clear (cache_evict all=true) or save ([[cache_put]]); every read
//     must return the value the body computes from the key (that is also what
//     save writes);
//   - when a new period began: dedupe_test::Payments::pay(<the period's key>,
//     replay_wait) once; its body appends "<key> <result id>" to
//     <dir>/dedupe.log (O_APPEND, one write) and returns that id.
// Then prints everything at once (nothing is written while the test runs, so
// a full pipe never stalls a worker) and exits:
//   COUNT <counter> <increments this process made>
//   GOT <dedupe key> <result id>          every dedupe call's result
//   ERR <op> <what>                       every exception a call threw (or a
//                                          wrong value read), the first 50
//   STATS ops=<n> errors=<n> cache_errors=<CacheStats::errors>
//         dedupe_errors=<DedupeStats::errors> replays=<n>
//   DONE
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cache_methods.h"
#include "dedupe_methods.h"
#include "jobs.weave.h"
#include "weave/cache.h"
#include "weave/dedupe.h"
#include "weave/lock.h"

using namespace std::chrono_literals;

namespace {

long long mono_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// What the cache's method body returns for a key (and save stores).
int cents_of(const std::string& id) {
  unsigned h = 7;
  for (unsigned char ch : id) h = h * 31 + ch;
  return static_cast<int>(h % 100'000);
}

struct Keys {
  std::string prefix;
  std::vector<std::string> counters, cache, dedupe;
};

Keys read_keys(const std::string& path) {
  Keys k;
  std::ifstream in(path);
  std::string kind, name;
  while (in >> kind >> name) {
    if (kind == "prefix") k.prefix = name;
    else if (kind == "counter") k.counters.push_back(name);
    else if (kind == "cache") k.cache.push_back(name);
    else if (kind == "dedupe") k.dedupe.push_back(name);
  }
  if (k.prefix.empty() || k.counters.empty() || k.cache.empty() || k.dedupe.empty())
    throw std::runtime_error("incomplete keys file " + path);
  return k;
}

class Output {
 public:
  void error(const std::string& op, const std::string& what) {
    std::lock_guard g(mutex_);
    if (++errors_ <= 50) lines_.push_back("ERR " + op + " " + what);
  }
  void got(const std::string& key, const std::string& id) {
    std::lock_guard g(mutex_);
    lines_.push_back("GOT " + key + " " + id);
  }
  long errors() {
    std::lock_guard g(mutex_);
    return errors_;
  }
  void print() {
    std::lock_guard g(mutex_);
    for (auto& l : lines_) std::cout << l << '\n';
    std::cout << std::flush;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> lines_;
  long errors_ = 0;
};

int read_counter(const std::string& path) {
  std::ifstream in(path);
  int v = 0;
  in >> v;
  return v;
}

int run(char** argv) {
  const std::string url = argv[1], dir = argv[2];
  const Keys keys = read_keys(argv[3]);
  const int threads = std::stoi(argv[4]);
  const long long period_ns = std::stoll(argv[5]) * 1'000'000LL;
  const std::string cache_name = "reshard";

  // Generous timeouts: the machine is shared; a timeout would be an error
  // the test counts, not what it is about.
  weave::LockOptions lo;
  lo.url = url;
  lo.command_timeout = 5s;
  weave::configure_locks(lo);
  weave::CacheOptions co;
  co.url = url;
  co.key_prefix = keys.prefix;
  co.command_timeout = 5s;
  weave::configure_cache(co);
  weave::DedupeOptions d;
  d.url = url;
  d.command_timeout = 5s;
  weave::configure_dedupe(d);

  Output out;
  weave::Woven<jobs::Jobs> jobs;
  cache_test::Catalog catalog;
  catalog.body = [](const std::string& id) -> cache_test::Found { return shop::Product{id, cents_of(id)}; };
  dedupe_test::Payments payments;
  const int log = ::open((dir + "/dedupe.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (log < 0) throw std::runtime_error("cannot open " + dir + "/dedupe.log");
  std::atomic<long> next_id{0};
  payments.body = [&](const std::string& key) {
    const std::string id = "r-" + std::to_string(::getpid()) + "-" + std::to_string(next_id.fetch_add(1));
    const std::string line = key + " " + id + "\n";
    [[maybe_unused]] auto n = ::write(log, line.data(), line.size());
    return shop::Receipt{id, 100};
  };

  std::cout << "READY" << std::endl;
  std::string go;
  long long start = 0;
  if (!(std::cin >> go >> start) || go != "go") return 2;
  while (mono_ns() < start) std::this_thread::sleep_for(1ms);
  std::atomic<bool> stopping{false};

  std::mutex count_mutex;
  std::map<std::string, long> counted;  // increments this process made, per counter
  std::atomic<long> ops{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(::getpid() * 131 + t));
      long long period_seen = -1;
      while (!stopping.load()) {
        const std::string& counter = keys.counters[rng() % keys.counters.size()];
        try {
          jobs.queued(counter, [&] {
            const std::string path = dir + "/" + counter;
            const int v = read_counter(path);
            std::this_thread::sleep_for(200us);  // widen the window a second holder would hit
            std::ofstream(path, std::ios::trunc) << v + 1 << '\n';
            std::lock_guard g(count_mutex);
            ++counted[counter];
            return 0;
          });
        } catch (const std::exception& e) {
          out.error("lock", e.what());
        }
        for (int i = 0; i < 3; ++i) {
          const std::string& key = keys.cache[rng() % keys.cache.size()];
          const unsigned dice = rng() % 20;
          try {
            if (dice == 0 && rng() % 50 == 0) {
              catalog.clear(cache_name);  // evict all: SCAN every master, evict what it finds
            } else if (dice == 0) {
              catalog.remove(cache_name, key);
            } else if (dice == 1) {
              catalog.save(cache_name, shop::Product{key, cents_of(key)});
            } else {
              const cache_test::Found f =
                  catalog.find(cache_name, key, dice < 5 ? cache_test::Find::both : cache_test::Find::remote);
              if (!f || f->id != key || f->cents != cents_of(key))
                out.error("cache", "read " + key + ": " + (f ? f->id + "=" + std::to_string(f->cents) : "none") +
                                       ", not " + std::to_string(cents_of(key)));
            }
          } catch (const std::exception& e) {
            out.error("cache", e.what());
          }
        }
        const long long period = (mono_ns() - start) / period_ns;
        if (period != period_seen && period < static_cast<long long>(keys.dedupe.size())) {
          period_seen = period;
          const std::string& key = keys.dedupe[static_cast<std::size_t>(period)];
          try {
            const shop::Receipt r = payments.pay(key, dedupe_test::Guard::replay_wait);
            out.got(key, r.id);
          } catch (const std::exception& e) {
            out.error("dedupe", e.what());
          }
        }
        ++ops;
      }
    });
  for (std::string word; std::cin >> word && word != "stop";) {
  }
  stopping = true;
  for (auto& t : ts) t.join();
  ::close(log);

  for (auto& [counter, n] : counted) std::cout << "COUNT " << counter << " " << n << '\n';
  out.print();
  const weave::CacheStats cs = weave::cache_stats(cache_name);
  const weave::DedupeStats ds = weave::dedupe_stats();
  std::cout << "STATS ops=" << ops.load() << " errors=" << out.errors() << " cache_errors=" << cs.errors
            << " dedupe_errors=" << ds.errors << " replays=" << ds.replays << "\nDONE" << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::cerr << "usage: reshard_worker <cluster url> <dir> <keys file> <threads> <dedupe period ms>\n";
    return 2;
  }
  try {
    return run(argv);
  } catch (const std::exception& e) {
    std::cout << "ERROR " << e.what() << std::endl;
    return 1;
  }
}
