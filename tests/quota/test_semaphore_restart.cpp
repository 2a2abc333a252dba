// Semaphore holders across a Redis restart, each case on its own
// redis-server: with its AOF (appendfsync always) the holders come back with
// the server, and no permit is granted twice; without persistence they are
// forgotten, and a holder's next renewal tells it so.
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "redis_server.h"
#include "weave/quota.h"
#include "weave/semaphore.h"

using namespace std::chrono_literals;

namespace {

std::unique_ptr<redis_test::Child> holder(const std::string& url, const std::string& key) {
  // A permit lease of 6 s, renewed every 2 s: a restart takes well under one renewal's slack.
  return std::make_unique<redis_test::Child>(
      std::vector<std::string>{WEAVE_SEMAPHORE_WORKER, url, key, "1", "6000", "hold"});
}

std::string temp_dir() {
  std::string dir = (std::filesystem::temp_directory_path() / "weave-sem-aof-XXXXXX").string();
  if (!::mkdtemp(dir.data())) throw std::runtime_error("mkdtemp failed");
  return dir;
}

}  // namespace

TEST_CASE("semaphore: a Redis restart from its AOF keeps the holders, and grants no permit twice") {
  const std::string dir = temp_dir();
  redis_test::RedisServer redis({"--appendonly", "yes", "--appendfsync", "always", "--dir", dir});
  weave::Semaphore sem({.url = redis.url()});
  auto h = holder(redis.url(), "aof");
  REQUIRE(h->line().value_or("").rfind("HELD ", 0) == 0);
  redis.restart_and_load();  // SIGKILL, then the same port and directory
  CHECK_FALSE(sem.try_acquire("aof", {.permits = 1}));
  std::this_thread::sleep_for(2500ms);  // a renewal after the restart
  h->send("check");
  CHECK(h->line() == std::optional<std::string>("LOST 0"));
  CHECK_FALSE(sem.try_acquire("aof", {.permits = 1}));
  h->send("release");
  CHECK(h->line() == std::optional<std::string>("RELEASE 1"));
  CHECK(sem.try_acquire("aof", {.permits = 1}));
  std::filesystem::remove_all(dir);
}

TEST_CASE("semaphore: a Redis restart without persistence forgets the holders, which then find their permits lost") {
  redis_test::RedisServer redis;
  weave::Semaphore sem({.url = redis.url()});
  auto h = holder(redis.url(), "volatile");
  REQUIRE(h->line().value_or("").rfind("HELD ", 0) == 0);
  redis.restart_and_load();
  weave::Permit taken = sem.try_acquire("volatile", {.permits = 1});
  CHECK(taken);
  std::this_thread::sleep_for(2500ms);  // the old holder's next renewal
  h->send("check");
  CHECK(h->line() == std::optional<std::string>("LOST 1"));
  h->send("release");
  CHECK(h->line() == std::optional<std::string>("RELEASE 0"));
  CHECK_FALSE(sem.try_acquire("volatile", {.permits = 1}));  // the new holder's permit stands
}
