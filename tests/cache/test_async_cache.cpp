// [[cache]] on asynchronous methods (src/cache/asio/), woven by weavegen
// (async_rates.h): concurrent misses of one key load once (single flight),
// and a local hit completes on the caller's executor, no pool thread.
#include <catch2/catch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "async/blocking_pool.h"
#include "async_rates.weave.h"
#include "async_test_support.h"
#include "weave/cache.h"
#include "weave/woven.h"

namespace asio = boost::asio;
using asynccache::Rates;

namespace {

std::string fresh_currency() {
  return "EUR-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
}

using async_test::run_threads;

}  // namespace

TEST_CASE("async cache: concurrent misses of one key load once, later calls hit without a pool thread",
          "[async]") {
  weave::configure_cache({.url = test_store_url()});
  weave::Woven<Rates> rates;
  const std::string eur = fresh_currency();  // a key no earlier run cached
  const weave::CacheStats before = weave::cache_stats("async-rates");
  int right = 0;
  {
    asio::io_context io;
    for (int i = 0; i < 50; ++i)
      asio::co_spawn(io, rates.rate(eur), [&](std::exception_ptr e, double r) { right += !e && r == 1.08; });
    run_threads(io, 1);
  }
  CHECK(right == 50);
  CHECK(rates.loads() == 1);
  const std::uint64_t pool_jobs = weave::detail::interceptor_pool().jobs();
  {
    asio::io_context io;
    for (int i = 0; i < 200; ++i)
      asio::co_spawn(io, rates.rate(eur), [&](std::exception_ptr e, double r) { right += !e && r == 1.08; });
    run_threads(io, 1);
  }
  const weave::CacheStats st = weave::cache_stats("async-rates");
  INFO("local hits " << st.local_hits << ", local misses " << st.local_misses << ", remote hits " << st.remote_hits
                     << ", loads " << st.loads << ", shared loads " << st.shared_loads << ", refused stale "
                     << st.refused_stale << ", entries " << st.local_entries);
  CHECK(right == 250);
  CHECK(rates.loads() == 1);
  CHECK(st.local_hits - before.local_hits >= 200);
  CHECK(weave::detail::interceptor_pool().jobs() == pool_jobs);  // the hits never went to the blocking interceptor
  weave::configure_cache({});
}
