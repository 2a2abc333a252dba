// Real cache_worker processes (fork/exec, tests/cache/cache_worker.cpp) for
// the tests across processes: the workers' shared "database" directory, a
// worker driven by lines, and a bounded poll.
#pragma once

#include <stdlib.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "cache_methods.h"
#include "redis_server.h"

namespace cache_test {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using redis_test::Child;

inline const std::string kWorker = WEAVE_CACHE_WORKER;

// The "database" directory the workers share: one file per key.
class TempDir {
 public:
  TempDir() {
    char t[] = "/tmp/weave-cache-db-XXXXXX";
    if (!::mkdtemp(t)) throw std::runtime_error("mkdtemp");
    path_ = t;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  void write(const std::string& key, int cents) const { std::ofstream(path_ + "/" + key) << cents << '\n'; }
  int read(const std::string& key) const {
    int cents = -1;
    std::ifstream(path_ + "/" + key) >> cents;
    return cents;
  }
  // How many times any worker's find body ran for `key` (a line each).
  int loads(const std::string& key) const {
    std::ifstream in(path_ + "/loads-" + key);
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }
  // Lets the bodies held by `hold on` go on.
  void open(const std::string& key) const { std::ofstream(path_ + "/open-" + key) << '\n'; }

 private:
  std::string path_;
};

using Stats = std::map<std::string, std::uint64_t>;

class Worker {
 public:
  Worker(const std::string& url, const TempDir& db) : child_({kWorker, url, db.path()}) {
    REQUIRE(ask("ping") == "pong");
  }
  Child& child() { return child_; }

  std::string ask(const std::string& command, std::chrono::milliseconds timeout = 30s) {
    child_.send(command);
    return answer(command, timeout);
  }
  std::string answer(const std::string& command, std::chrono::milliseconds timeout = 30s) {
    auto l = child_.line(timeout);
    if (!l) throw std::runtime_error("cache_worker gave no answer to '" + command + "'");
    if (l->rfind("error", 0) == 0) throw std::runtime_error("cache_worker: '" + command + "': " + *l);
    return *l;
  }
  // The value's cents, -1 for none.
  int find(const std::string& name, const std::string& key) { return cents(ask("find " + name + " " + key)); }
  static int cents(const std::string& answer) { return answer == "none" ? -1 : std::stoi(answer); }
  void save(const std::string& name, const std::string& key, int cents) {
    REQUIRE(ask("save " + name + " " + key + " " + std::to_string(cents)) == "ok");
  }
  Stats stats(const std::string& name) {
    Stats s;
    std::istringstream in(ask("stats " + name));
    std::string field;
    while (in >> field) {
      auto eq = field.find('=');
      s[field.substr(0, eq)] = std::stoull(field.substr(eq + 1));
    }
    return s;
  }

 private:
  Child child_;
};

}  // namespace cache_test
