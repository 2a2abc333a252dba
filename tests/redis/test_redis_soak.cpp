// Fault soak (label `soak`, not in the default run): 4 processes increment a
// fenced counter under one redis lock while the test SIGSTOPs them past their
// leases and SIGKILLs and respawns them at random. Invariants: no increment is
// lost (value == accepted writes) and the counter keeps moving.
//   WEAVE_SOAK_SECONDS=120 ctest -L soak
#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "redis_server.h"

using namespace std::chrono_literals;
using redis_test::Child;
using redis_test::RedisServer;

TEST_CASE("redis soak: fenced increments survive SIGSTOP and SIGKILL chaos", "[redis][soak]") {
  const char* env = std::getenv("WEAVE_SOAK_SECONDS");
  const int seconds = env ? std::atoi(env) : 60;
  const std::string lease_ms = "300";
  RedisServer server;
  auto raw = server.client();
  auto spawn = [&](int run_seconds) {
    return std::make_unique<Child>(std::vector<std::string>{
        WEAVE_LOCK_WORKER, "fenced-counter", server.url(), std::to_string(server.port()), "soak",
        lease_ms, "store", std::to_string(run_seconds)});
  };
  const auto start = std::chrono::steady_clock::now();
  const auto until = start + std::chrono::seconds(seconds);
  std::vector<std::unique_ptr<Child>> workers;
  for (int i = 0; i < 4; ++i) workers.push_back(spawn(seconds));

  std::mt19937 rng(12345);
  int stops = 0, kills = 0;
  while (std::chrono::steady_clock::now() + 3s < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200 + rng() % 300));
    auto& victim = workers[rng() % workers.size()];
    if (rng() % 4 == 0) {  // crash and replace
      victim->signal(SIGKILL);
      victim->wait();
      const auto left = std::chrono::duration_cast<std::chrono::seconds>(until - std::chrono::steady_clock::now());
      victim = spawn(static_cast<int>(std::max<long>(1, left.count())));
      ++kills;
    } else {  // pause past the lease
      victim->signal(SIGSTOP);
      std::this_thread::sleep_for(std::chrono::milliseconds(400 + rng() % 800));
      victim->signal(SIGCONT);
      ++stops;
    }
  }
  for (auto& w : workers) {
    auto last = w->line(std::chrono::seconds(seconds + 30));
    INFO("worker said: " << (last ? *last : "<nothing>"));
    while (last && last->rfind("DONE", 0) != 0) last = w->line(30s);
    CHECK(last);
    CHECK(w->wait() == 0);
  }
  const long long value = std::stoll(raw.cmd({"GET", "store:value"}).str);
  const long long accepted = std::stoll(raw.cmd({"GET", "store:accepted"}).str);
  INFO("stops " << stops << ", kills " << kills << ", value " << value);
  CHECK(stops > 0);
  CHECK(value == accepted);
  CHECK(value > 100);  // progress despite the chaos
}
