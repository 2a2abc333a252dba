// [[cache]] on asynchronous methods (src/cache/asio/), woven by weavegen
// (async_rates.h): concurrent misses of one key load once (single flight),
// waiting suspended; a local hit completes on the caller's executor; with
// sync=true a miss waits, suspended, for another process's fill. No call
// takes a thread of the interceptor pool. On mem:// the other "process" is a
// caller of the shared table itself; on redis://, a cache_worker process.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "async/blocking_pool.h"
#include "async_rates.weave.h"
#include "async_test_support.h"
#include "cache_methods.h"
#include "weave/asio.h"
#include "weave/cache.h"
#include "weave/woven.h"
#include "cache/remote_tier.h"
#include "cache_processes.h"

namespace net = weave::net;
using asynccache::Quote;
using asynccache::Quotes;
using asynccache::Rates;
using namespace std::chrono_literals;

namespace {

std::string fresh_currency() {
  return "EUR-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
}

using async_test::Outcome;
using async_test::process_threads;
using async_test::run_threads;
using cache_test::eventually;

// The process's largest thread count while it runs.
class ThreadPeak {
 public:
  ThreadPeak() : sampler_([this] {
    while (!stop_) {
      peak_ = std::max(peak_.load(), process_threads());
      std::this_thread::sleep_for(1ms);
    }
  }) {}
  ~ThreadPeak() { stop(); }
  int stop() {
    stop_ = true;
    if (sampler_.joinable()) sampler_.join();
    return peak_;
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> peak_{0};
  std::thread sampler_;
};

// A find's handler: its value's cents (-1: none) or its error.
auto record_quote(Outcome& o) {
  return [&o](std::exception_ptr e, std::optional<Quote> q) {
    o.error = e;
    o.value = q ? q->cents : -1;
    o.done = true;
  };
}

// Another process of the deployment loading `key` with sync=true, holding
// the key's fill lease until fill(): on mem://, a caller of the shared table
// itself; on Redis, a cache_worker whose load is held (its fill lease
// renewed).
class OtherLoader {
 public:
  explicit OtherLoader(const std::string& key) : key_(key) {
    if (test_store_is_mem()) {
      table_ = weave::detail::make_mem_remote("store-suite");
      read_ = table_->get("async-quotes", key_);
      REQUIRE(table_->try_claim_fill("async-quotes", key_, "other", 60s, read_.version).claim ==
              weave::detail::FillClaim::load);
      return;
    }
    db_.write(key_, 250);
    worker_ = std::make_unique<cache_test::Worker>(test_store_url(), db_);
    REQUIRE(worker_->ask("hold on") == "ok");
    worker_->child().send("sfind async-quotes " + key_);
    REQUIRE(eventually([&] { return db_.loads(key_) == 1; }));
  }
  void fill() {
    if (table_) {
      const std::string json = R"({"id":")" + key_ + R"(","cents":250})";
      REQUIRE(table_->fill("async-quotes", key_, json, 60s, read_.version, "other"));
      return;
    }
    db_.open(key_);
    REQUIRE(cache_test::Worker::cents(worker_->answer("sfind")) == 250);
  }

 private:
  std::string key_;
  std::shared_ptr<weave::detail::RemoteTier> table_;  // mem://
  weave::detail::RemoteRead read_;
  cache_test::TempDir db_;  // Redis
  std::unique_ptr<cache_test::Worker> worker_;
};

}  // namespace

TEST_CASE("async cache: concurrent misses of one key load once, suspended: no pool thread, no thread per "
          "waiter, and later calls hit", "[async]") {
  weave::configure_cache({.url = test_store_url()});
  weave::Woven<Rates> rates;
  const std::string eur = fresh_currency();  // a key no earlier run cached
  const weave::CacheStats before = weave::cache_stats("async-rates");
  const std::uint64_t pool_jobs = weave::detail::interceptor_pool().jobs();
  int right = 0;
  ThreadPeak peak;
  const int threads = process_threads();  // with the sampler's
  {
    net::io_context io;
    for (int i = 0; i < 200; ++i)
      net::co_spawn(io, rates.rate(eur), [&](std::exception_ptr e, double r) { right += !e && r == 1.08; });
    run_threads(io, 1);
  }
  const int most = peak.stop();
  CHECK(right == 200);
  CHECK(rates.loads() == 1);
  // 199 waited for the one load, suspended: at most the store pool's 8 threads came.
  CHECK(most - threads <= 8);
  {
    net::io_context io;
    for (int i = 0; i < 200; ++i)
      net::co_spawn(io, rates.rate(eur), [&](std::exception_ptr e, double r) { right += !e && r == 1.08; });
    run_threads(io, 1);
  }
  const weave::CacheStats st = weave::cache_stats("async-rates");
  INFO("local hits " << st.local_hits << ", local misses " << st.local_misses << ", remote hits " << st.remote_hits
                     << ", loads " << st.loads << ", shared loads " << st.shared_loads << ", refused stale "
                     << st.refused_stale << ", entries " << st.local_entries);
  CHECK(right == 400);
  CHECK(rates.loads() == 1);
  CHECK(st.shared_loads - before.shared_loads == 199);
  CHECK(st.local_hits - before.local_hits >= 200);
  CHECK(weave::detail::interceptor_pool().jobs() == pool_jobs);  // no call went to the blocking interceptor
  weave::configure_cache({});
}

TEST_CASE("async cache sync=true: misses wait, suspended, for another process's load and take its fill",
          "[async]") {
  weave::configure_cache({.url = test_store_url()});
  weave::Woven<Quotes> quotes;
  quotes.open();
  const std::string key = async_test::unique_name("sync");
  const weave::CacheStats before = weave::cache_stats("async-quotes");
  const std::uint64_t pool_jobs = weave::detail::interceptor_pool().jobs();
  OtherLoader other(key);
  std::vector<Outcome> outcomes(20);
  net::io_context io;
  for (Outcome& o : outcomes) net::co_spawn(io, quotes.find(key), record_quote(o));
  std::thread runner([&] { io.run(); });
  struct Join {
    std::thread& t;
    ~Join() { t.join(); }
  } join{runner};
  // The leader of this process's flight waits on the other's fill lease.
  REQUIRE(eventually([&] { return weave::cache_stats("async-quotes").sync_waits > before.sync_waits; }));
  other.fill();
  REQUIRE(eventually([&] { return io.stopped(); }));
  for (const Outcome& o : outcomes) {
    CHECK(!o.error);
    CHECK(o.value == 250);  // the other's value
  }
  CHECK(quotes.loads() == 0);
  const weave::CacheStats st = weave::cache_stats("async-quotes");
  CHECK(st.sync_waits - before.sync_waits == 1);
  CHECK(st.remote_hits - before.remote_hits == 1);
  CHECK(st.shared_loads - before.shared_loads == 19);
  CHECK(weave::detail::interceptor_pool().jobs() == pool_jobs);
  weave::configure_cache({});
}

TEST_CASE("async cache: a miss cancelled while it waits for another call's load ends at once, and the load "
          "still serves the rest", "[async]") {
  weave::configure_cache({.url = test_store_url()});
  weave::Woven<Quotes> quotes;  // held until open()
  const std::string key = async_test::unique_name("cancel");
  Outcome leader, cancelled, waiter;
  net::cancellation_signal signal;
  net::io_context io;
  net::co_spawn(io, quotes.find(key), record_quote(leader));
  std::thread runner([&] { io.run(); });
  struct Join {
    Quotes& q;
    std::thread& t;
    ~Join() {
      q.open();
      t.join();
    }
  } join{quotes, runner};
  REQUIRE(eventually([&] { return quotes.loads() == 1; }));
  // One thread runs the io_context: both join the flight before the cancellation runs.
  net::post(io, [&] {
    net::co_spawn(io, quotes.find(key), net::bind_cancellation_slot(signal.slot(), record_quote(cancelled)));
    net::co_spawn(io, quotes.find(key), record_quote(waiter));
    net::post(io, [&] { signal.emit(net::cancellation_type::terminal); });
  });
  REQUIRE(eventually([&] { return cancelled.done.load(); }));
  CHECK(cancelled.aborted());
  CHECK(!leader.done);
  CHECK(!waiter.done);
  quotes.open();
  REQUIRE(eventually([&] { return leader.done && waiter.done; }));
  CHECK(leader.value == 100);
  CHECK(waiter.value == 100);
  CHECK(quotes.loads() == 1);
  weave::configure_cache({});
}

TEST_CASE("async cache sync=true: a load cancelled while it runs gives its fill lease back at once", "[async]") {
  weave::configure_cache({.url = test_store_url()});
  weave::Woven<Quotes> quotes;  // held until open()
  const std::string key = async_test::unique_name("cancel-load");
  const weave::CacheStats before = weave::cache_stats("async-quotes");
  Outcome loader, next;
  net::cancellation_signal signal;
  net::io_context io;
  net::co_spawn(io, quotes.find(key), net::bind_cancellation_slot(signal.slot(), record_quote(loader)));
  net::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        while (quotes.loads() == 0) co_await asynccache::sleep_ms(1);
        signal.emit(net::cancellation_type::terminal);
        while (!loader.done) co_await asynccache::sleep_ms(1);
        quotes.open();
        // The lease was given back: this call claims it and loads, it does not wait for it.
        const std::optional<Quote> q = co_await quotes.find(key);
        next.value = q ? q->cents : -1;
        next.done = true;
      },
      net::detached);
  io.run();
  CHECK(loader.aborted());
  REQUIRE(next.done);
  CHECK(next.value == 100);
  CHECK(quotes.loads() == 2);
  CHECK(weave::cache_stats("async-quotes").sync_waits == before.sync_waits);
  weave::configure_cache({});
}
