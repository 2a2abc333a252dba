// A separate process reading and writing through [[cache]] / [[cache_put]] /
// [[cache_evict]] methods of the shapes in cache_methods.h, driven by
// test_cache_processes.cpp (and bench_cache) through stdin / stdout lines.
//
//   cache_worker <store url> <database dir>
//
// The "database" is one file per key in <database dir> holding the value's
// cents: the source of truth, independent of the store. `save` writes the
// file in the method body (so before cache_put's interceptor stores and
// broadcasts the result), `find` reads it in the method body (a miss), and
// `remove` deletes it (before cache_evict evicts).
//
// Commands (one reply line each):
//   find <name> <key>            -> <cents> | none
//   save <name> <key> <cents>    -> ok
//   remove <name> <key>          -> ok
//   stats <name>                 -> local_hits=.. local_misses=.. ... (every CacheStats field)
//   slow <ms>                    -> ok     find's body sleeps <ms> after reading the file
//   sfind / rfind <name> <key>   -> like find, through sync=true / refresh_after (cache_methods.h)
//   burst <find|sfind|rfind> <name> <key> <threads>
//                                -> values <cents> ...   that many threads call it at once
//   hold on|off                  -> ok     find's body first waits for the file <dir>/open-<key>
//   fail <n>                     -> ok     the next n bodies of find throw (after the hold)
//   lease <ms>                   -> ok     configure_cache again with fill_lease = <ms>
//   ping                         -> pong
// Every body of find first appends a line to <dir>/loads-<key>: the loads of
// all processes, counted by the test.
//   oracle <name> <keys> <writer> <writers> <run ms> <quiet ms> <write %> <seed> <log path>
//                                -> done reads=<n> writes=<n>
//     keys k0..k<keys-1>; this process writes (sequentially, seq+1 each time)
//     the keys i with i % <writers> == <writer> (<writer> = -1: reads only),
//     reads any key, for <run ms>, then only reads for <quiet ms>. Every
//     operation goes to <log path>, one line each (staleness_oracle.h):
//       R|W <key> <seq> <invoked ns> <completed ns>   (CLOCK_MONOTONIC)
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cache_methods.h"
#include "weave/cache.h"
#include "worker_lines.h"

using cache_test::Found;

namespace {

// The database: one file per key.
class Database {
 public:
  explicit Database(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }

  std::optional<int> read(const std::string& key) const {
    std::ifstream in(dir_ + "/" + key);
    int cents = 0;
    if (!(in >> cents)) return std::nullopt;
    return cents;
  }
  // Atomic: a reader sees the old file or the new one, never a partial write.
  void write(const std::string& key, int cents) const {
    const std::string tmp = dir_ + "/." + key + "." + std::to_string(::getpid()) + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << cents << '\n';
    }
    if (std::rename(tmp.c_str(), (dir_ + "/" + key).c_str()) != 0) throw std::runtime_error("rename " + tmp);
  }
  void erase(const std::string& key) const { ::unlink((dir_ + "/" + key).c_str()); }

 private:
  std::string dir_;
};

// The catalog of cache_methods.h with a database behind it.
class DbCatalog {
 public:
  explicit DbCatalog(Database db) : db_(std::move(db)) {}
  std::chrono::milliseconds slow{0};
  std::atomic<bool> hold{false};
  std::atomic<int> fail{0};

  DbCatalog(const DbCatalog&) = delete;
  ~DbCatalog() { weave::detail::retire_detached(this); }  // as weavegen's proxy destructor

  Found find(const std::string& name, const std::string& id, cache_test::Find how = cache_test::Find::both) {
    const std::string rendered[2] = {name, id};
    auto target = [&]() -> Found { return load(id); };
    if (how == cache_test::Find::refresh)  // a proxy that can copy the call: the reload runs in the background
      return weave::detail::invoke<Found>(
          cache_test::find_info(how), {}, rendered, target, weave::detail::CannotSkip{},
          weave::detail::detachable<Found>(
              this, [this](const std::string&, const std::string& copied_id) -> Found { return load(copied_id); },
              name, id));
    return weave::detail::invoke<Found>(cache_test::find_info(how), {}, rendered, target, weave::detail::CannotSkip{});
  }

  Found load(const std::string& id) {
    count_load(id);
    if (hold) wait_open(id);
    int failing = fail.load();
    while (failing > 0 && !fail.compare_exchange_weak(failing, failing - 1)) {
    }
    if (failing > 0) throw std::runtime_error("database down");
    const std::optional<int> cents = db_.read(id);
    if (slow.count() > 0) std::this_thread::sleep_for(slow);  // a slow database answer
    if (!cents) return std::nullopt;
    return shop::Product{id, *cents};
  }

  shop::Product save(const std::string& name, const shop::Product& p) {
    static constexpr weave::MethodInfo info{"shop::Catalog::save", "catalog.h", 2, cache_test::k_put, {},
                                            &cache_test::k_product_codec};
    const std::string rendered[2] = {name, p.id};
    return weave::detail::invoke<shop::Product>(
        info, {}, rendered,
        [&] {
          db_.write(p.id, p.cents);
          return p;
        },
        weave::detail::CannotSkip{});
  }

  void remove(const std::string& name, const std::string& id) {
    static constexpr weave::MethodInfo info{"shop::Catalog::remove", "catalog.h", 3, cache_test::k_evict, {}};
    const std::string rendered[2] = {name, id};
    weave::detail::invoke<void>(info, {}, rendered, [&] { db_.erase(id); }, weave::detail::CannotSkip{});
  }

 private:
  // One line per load, appended whole (O_APPEND): every process's loads in one file.
  void count_load(const std::string& id) const {
    const int fd = ::open((db_.dir() + "/loads-" + id).c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0) throw std::runtime_error("cannot count a load of " + id);
    const std::string line = std::to_string(::getpid()) + "\n";
    [[maybe_unused]] auto n = ::write(fd, line.data(), line.size());
    ::close(fd);
  }
  void wait_open(const std::string& id) const {
    struct stat st{};
    while (::stat((db_.dir() + "/open-" + id).c_str(), &st) != 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  Database db_;
};

std::string stats_line(const weave::CacheStats& s) {
  std::ostringstream o;
  o << "local_hits=" << s.local_hits << " local_misses=" << s.local_misses << " remote_hits=" << s.remote_hits
    << " remote_misses=" << s.remote_misses << " loads=" << s.loads << " load_failures=" << s.load_failures
    << " load_time_ns=" << s.load_time.count() << " shared_loads=" << s.shared_loads << " evictions=" << s.evictions
    << " invalidations_sent=" << s.invalidations_sent << " invalidation_messages=" << s.invalidation_messages
    << " invalidations_received=" << s.invalidations_received
    << " errors=" << s.errors << " decode_failures=" << s.decode_failures << " refused_stale=" << s.refused_stale
    << " sync_waits=" << s.sync_waits << " refreshes=" << s.refreshes;
  return o.str();
}

struct OracleArgs {
  std::string name;
  int keys = 0, writer = -1, writers = 1;
  long run_ms = 0, quiet_ms = 0;
  int write_pct = 0;
  unsigned seed = 0;
  std::string log;
};

std::string oracle(DbCatalog& catalog, const Database& db, const OracleArgs& a) {
  struct Op {
    char kind;
    int key;
    long seq;
    std::int64_t invoked, completed;
  };
  std::vector<Op> ops;
  ops.reserve(1 << 16);
  std::mt19937 rng(a.seed);
  std::vector<int> own;
  std::unordered_map<int, long> seq;  // the last value this process wrote per own key
  for (int k = 0; k < a.keys; ++k)
    if (a.writer >= 0 && k % a.writers == a.writer) {
      own.push_back(k);
      seq[k] = db.read("k" + std::to_string(k)).value_or(0);
    }
  const std::int64_t start = monotonic_ns(), writes_end = start + a.run_ms * 1'000'000,
                     end = writes_end + a.quiet_ms * 1'000'000;
  long reads = 0, writes = 0;
  for (std::int64_t now = start; now < end; now = monotonic_ns()) {
    const bool write = !own.empty() && now < writes_end && int(rng() % 100) < a.write_pct;
    if (write) {
      const int k = own[rng() % own.size()];
      const long next = seq[k] + 1;
      const std::int64_t invoked = monotonic_ns();
      catalog.save(a.name, shop::Product{"k" + std::to_string(k), int(next)});
      ops.push_back({'W', k, next, invoked, monotonic_ns()});
      seq[k] = next;
      ++writes;
    } else {
      const int k = int(rng() % unsigned(a.keys));
      const std::int64_t invoked = monotonic_ns();
      const Found f = catalog.find(a.name, "k" + std::to_string(k));
      ops.push_back({'R', k, f ? long(f->cents) : -1, invoked, monotonic_ns()});
      ++reads;
    }
    // About 2,000 operations a second: enough to see every interleaving,
    // few enough that a 300 s soak log stays small.
    std::this_thread::sleep_for(std::chrono::microseconds(200 + rng() % 400));
  }
  std::FILE* f = std::fopen(a.log.c_str(), "w");
  if (!f) throw std::runtime_error("cannot write " + a.log);
  for (const Op& op : ops)
    std::fprintf(f, "%c k%d %ld %lld %lld\n", op.kind, op.key, op.seq, static_cast<long long>(op.invoked),
                 static_cast<long long>(op.completed));
  std::fclose(f);
  return "done reads=" + std::to_string(reads) + " writes=" + std::to_string(writes);
}

cache_test::Find find_kind(const std::string& cmd) {
  if (cmd == "sfind") return cache_test::Find::sync;
  if (cmd == "rfind") return cache_test::Find::refresh;
  return cache_test::Find::both;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: cache_worker <store url> <database dir>\n");
    return 2;
  }
  weave::CacheOptions options;
  options.url = argv[1];
  options.connect_timeout = std::chrono::milliseconds(500);
  options.command_timeout = std::chrono::milliseconds(1000);
  weave::configure_cache(options);
  Database db(argv[2]);
  DbCatalog catalog(db);

  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string cmd, name, key;
    in >> cmd;
    try {
      if (cmd == "find" || cmd == "sfind" || cmd == "rfind") {
        in >> name >> key;
        const Found f = catalog.find(name, key, find_kind(cmd));
        say(f ? std::to_string(f->cents) : "none");
      } else if (cmd == "burst") {
        std::string kind;
        int threads = 0;
        in >> kind >> name >> key >> threads;
        std::vector<std::string> got(static_cast<std::size_t>(threads));
        std::vector<std::thread> callers;
        for (int i = 0; i < threads; ++i)
          callers.emplace_back([&, i] {
            try {
              const Found f = catalog.find(name, key, find_kind(kind));
              got[static_cast<std::size_t>(i)] = f ? std::to_string(f->cents) : "none";
            } catch (const std::exception&) {
              got[static_cast<std::size_t>(i)] = "threw";
            }
          });
        std::string line = "values";
        for (int i = 0; i < threads; ++i) {
          callers[static_cast<std::size_t>(i)].join();
          line += " " + got[static_cast<std::size_t>(i)];
        }
        say(line);
      } else if (cmd == "hold") {
        std::string on;
        in >> on;
        catalog.hold = on == "on";
        say("ok");
      } else if (cmd == "fail") {
        int n = 0;
        in >> n;
        catalog.fail = n;
        say("ok");
      } else if (cmd == "lease") {
        long ms = 0;
        in >> ms;
        options.fill_lease = std::chrono::milliseconds(ms);
        weave::configure_cache(options);
        say("ok");
      } else if (cmd == "save") {
        int cents = 0;
        in >> name >> key >> cents;
        catalog.save(name, shop::Product{key, cents});
        say("ok");
      } else if (cmd == "remove") {
        in >> name >> key;
        catalog.remove(name, key);
        say("ok");
      } else if (cmd == "stats") {
        in >> name;
        say(stats_line(weave::cache_stats(name)));
      } else if (cmd == "slow") {
        long ms = 0;
        in >> ms;
        catalog.slow = std::chrono::milliseconds(ms);
        say("ok");
      } else if (cmd == "ping") {
        say("pong");
      } else if (cmd == "oracle") {
        OracleArgs a;
        in >> a.name >> a.keys >> a.writer >> a.writers >> a.run_ms >> a.quiet_ms >> a.write_pct >> a.seed >> a.log;
        say(oracle(catalog, db, a));
      } else {
        say("error unknown command '" + cmd + "'");
      }
    } catch (const std::exception& e) {
      say(std::string("error ") + e.what());
    }
  }
  return 0;
}
