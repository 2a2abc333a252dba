// Every thread Weave starts carries a name "weave-<role>" (top -H, gdb and
// perf show whose it is): the renewer, the lost-lease notifier, a store's
// subscription, the queue's senders.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "redis_server.h"
#include "weave/lock.h"
#include "weave/queue.h"

using namespace std::chrono_literals;

namespace {

// The names of this process's threads but the main one.
std::multiset<std::string> thread_names() {
  std::multiset<std::string> names;
  DIR* tasks = ::opendir("/proc/self/task");
  REQUIRE(tasks);
  while (const dirent* e = ::readdir(tasks)) {
    if (e->d_name[0] == '.' || std::stol(e->d_name) == ::getpid()) continue;
    std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
    std::string name;
    std::getline(comm, name);
    names.insert(name);
  }
  ::closedir(tasks);
  return names;
}

}  // namespace

TEST_CASE("threads: every thread Weave starts is named weave-<role>") {
  redis_test::RedisServer server;
  // mem://: a watchdog lease (the renewer), a fixed lease run out while held (the notifier)
  weave::LockClient mem({.url = "mem://thread-names", .on_lost = [](const weave::Lease&, std::string_view) {}});
  weave::LeaseHandle watched = mem.acquire("watched");
  weave::LeaseHandle lost = mem.acquire("lost", {.ttl = 30ms});
  std::this_thread::sleep_for(200ms);
  // redis://: a waiter's subscription, the queue's senders
  weave::LockClient redis({.url = server.url()});
  weave::LeaseHandle held = redis.acquire("held");
  CHECK_FALSE(redis.try_acquire("held", {.wait = 50ms}));
  weave::configure_queues({.url = server.url()});
  weave::Queue queue("thread-names");
  queue.offer_json_async(R"({"n":1})", 0ms).get();

  const std::multiset<std::string> names = thread_names();
  for (const char* role : {"weave-renew", "weave-lost", "weave-sub", "weave-qsend"}) {
    INFO(role);
    CHECK(names.count(role) >= 1);
  }
  for (const std::string& name : names) {
    INFO(name);
    CHECK(name.rfind("weave-", 0) == 0);
  }
}
