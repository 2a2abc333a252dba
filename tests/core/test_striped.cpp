// detail::StripedCounters and thread_slot() (src/core/striped.h): counts
// summed exactly across threads, and the slots of exited threads handed out
// again, so a program that keeps starting threads stays on owned stripes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <set>
#include <thread>
#include <vector>

#include "core/striped.h"

namespace {
struct alignas(64) Tally {
  std::atomic<std::uint64_t> calls{0};
  std::atomic<std::int64_t> micros{0};
};
}  // namespace

TEST_CASE("striped counters: 40 threads, past the owned stripes, lose no count", "[core]") {
  weave::detail::StripedCounters<Tally, 4> tally;  // 4 owned stripes: most threads share the last one
  std::vector<std::thread> threads;
  for (int t = 0; t < 40; ++t)
    threads.emplace_back([&tally] {
      for (int i = 0; i < 5000; ++i) {
        tally.add(&Tally::calls);
        const unsigned slot = weave::detail::thread_slot();
        decltype(tally)::add_to(tally.of(slot).micros, 2, slot);
      }
    });
  for (auto& t : threads) t.join();
  CHECK(tally.sum(&Tally::calls) == 40u * 5000u);
  CHECK(tally.sum(&Tally::micros) == 40 * 5000 * 2);
}

TEST_CASE("thread_slot: distinct among live threads, and reused after a thread exits", "[core]") {
  // 8 live threads at once: 8 distinct slots.
  std::vector<unsigned> live(8);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < live.size(); ++i)
    threads.emplace_back([&, i] {
      live[i] = weave::detail::thread_slot();
      ready.fetch_add(1);
      while (ready.load() < static_cast<int>(live.size())) std::this_thread::yield();
    });
  for (auto& t : threads) t.join();
  CHECK(std::set<unsigned>(live.begin(), live.end()).size() == live.size());

  // 200 threads one after another: each finds a slot an exited one gave
  // back, so the slots stay small (without reuse they would reach 200+).
  unsigned highest = 0;
  for (int i = 0; i < 200; ++i) {
    unsigned slot = 0;
    std::thread([&slot] { slot = weave::detail::thread_slot(); }).join();
    highest = std::max(highest, slot);
  }
  CHECK(highest < 16);
}
