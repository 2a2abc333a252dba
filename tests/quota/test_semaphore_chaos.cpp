// Semaphore chaos (label soak): semaphore_worker processes cycle permits of
// one key while the test kills them (SIGKILL), stops them past their lease
// (SIGSTOP, SIGCONT) and restarts Redis from its AOF (appendfsync always),
// round after round. The oracle: every hold whose release found the permit
// still held was live throughout, so those holds (CLOCK_MONOTONIC, one
// clock for every process of the host) never overlap more than `permits`
// deep. WEAVE_SEMAPHORE_CHAOS_ROUNDS sets the rounds (default 1,000).
#include <catch2/catch.hpp>

#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <queue>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "redis_server.h"
#include "weave/quota.h"
#include "weave/semaphore.h"

using namespace std::chrono_literals;

namespace {

constexpr int kPermits = 2;
constexpr int kWorkers = 6;
constexpr auto kLease = 1000ms;  // a stop of up to 1.5 leases outlives it

struct Hold {
  long long from = 0, to = 0;
  unsigned long long token = 0;
  char kept = '?';
};

std::vector<Hold> read_holds(const std::string& file) {
  std::vector<Hold> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    Hold h;
    if (fields >> h.from >> h.to >> h.token >> h.kept) out.push_back(h);  // (a killed writer's last line may be cut)
  }
  return out;
}

}  // namespace

TEST_CASE("semaphore chaos: holders killed and stopped, Redis restarted from its AOF: never more than `permits` live holds") {
  const char* env = ::getenv("WEAVE_SEMAPHORE_CHAOS_ROUNDS");
  const int rounds = env ? std::atoi(env) : 1000;
  std::string dir = (std::filesystem::temp_directory_path() / "weave-sem-chaos-XXXXXX").string();
  REQUIRE(::mkdtemp(dir.data()));
  redis_test::RedisServer redis({"--appendonly", "yes", "--appendfsync", "always", "--dir", dir});
  const std::string key = "chaos";
  int started = 0;
  std::vector<std::string> files;
  auto start_worker = [&] {
    files.push_back(dir + "/holds-" + std::to_string(started++));
    return std::make_unique<redis_test::Child>(std::vector<std::string>{
        WEAVE_SEMAPHORE_WORKER, redis.url(), key, std::to_string(kPermits), std::to_string(kLease.count()), "chaos",
        files.back(), "500"});
  };
  std::vector<std::unique_ptr<redis_test::Child>> workers;
  for (int i = 0; i < kWorkers; ++i) workers.push_back(start_worker());

  std::minstd_rand rnd(20261130);
  int kills = 0, stops = 0, restarts = 0;
  for (int round = 0; round < rounds; ++round) {
    const unsigned action = rnd() % 100;
    auto& victim = workers[rnd() % workers.size()];
    if (action < 50) {
      std::this_thread::sleep_for(50ms);
    } else if (action < 70) {
      victim->signal(SIGKILL);
      victim = start_worker();
      ++kills;
    } else if (action < 90) {
      victim->signal(SIGSTOP);
      std::this_thread::sleep_for(std::chrono::milliseconds(rnd() % 1500));
      victim->signal(SIGCONT);
      ++stops;
    } else {
      redis.restart_and_load();  // SIGKILL, then the same port and directory
      ++restarts;
    }
  }
  std::this_thread::sleep_for(200ms);
  for (auto& w : workers) w->signal(SIGKILL);
  workers.clear();  // (reaped)

  std::vector<Hold> live;
  std::size_t holds = 0, lost = 0;
  for (const std::string& f : files) {
    for (const Hold& h : read_holds(f)) {
      ++holds;
      if (h.kept == '1') live.push_back(h);
      if (h.kept == '0') ++lost;
    }
  }
  INFO(rounds << " rounds: " << kills << " kills, " << stops << " stops, " << restarts << " restarts; " << holds
              << " holds, " << live.size() << " live throughout, " << lost << " lost");
  // Deepest overlap of the live holds: at each start, those begun before it
  // and not over yet (their ends in a min-heap).
  std::sort(live.begin(), live.end(), [](const Hold& a, const Hold& b) { return a.from < b.from; });
  std::priority_queue<long long, std::vector<long long>, std::greater<>> ends;
  std::size_t deepest = 0;
  for (const Hold& h : live) {
    while (!ends.empty() && ends.top() <= h.from) ends.pop();
    ends.push(h.to);
    deepest = std::max(deepest, ends.size());
  }
  CHECK(deepest <= static_cast<std::size_t>(kPermits));
  CHECK(live.size() > static_cast<std::size_t>(rounds));  // the key kept serving through the chaos
  // Fencing tokens of live holds are distinct.
  std::vector<unsigned long long> tokens;
  for (const Hold& h : live) tokens.push_back(h.token);
  std::sort(tokens.begin(), tokens.end());
  CHECK(std::adjacent_find(tokens.begin(), tokens.end()) == tokens.end());
  // Afterwards the key is whole again: its permits come back within a lease.
  weave::Semaphore sem({.url = redis.url(), .permit_lease = kLease});
  weave::Permit a = sem.try_acquire(key, {.permits = kPermits, .wait = 3 * kLease});
  weave::Permit b = sem.try_acquire(key, {.permits = kPermits, .wait = 3 * kLease});
  CHECK(a);
  CHECK(b);
  std::filesystem::remove_all(dir);
}
