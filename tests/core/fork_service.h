// A service using every feature, woven by weavegen, for the fork() tests
// (test_fork.cpp): a lock-guarded counter, a cached read and a deduplicated
// slow job whose body reports into a directory.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace forktest {

class Service {
 public:
  virtual ~Service() = default;

  // Read-modify-write of `counter` under the lock (a data race without it).
  [[lock(key="fork:counter:<name>", ttl=5s, wait=5s)]]
  virtual long bump([[maybe_unused]] const std::string& name) {
    const long v = counter.load(std::memory_order_relaxed);
    counter.store(v + 1, std::memory_order_relaxed);
    return v + 1;
  }

  [[cache(name="fork-price", key="<sku>", ttl=10min)]]
  virtual int price(const std::string& sku) {
    ++loads;
    return static_cast<int>(sku.size()) * 100;
  }

  // The body creates <dir>/started-<pid>, sleeps `ms`, appends "<pid>\n" to
  // <dir>/ran-<key>; returns this process's id.
  [[dedupe(key="fork:job:<key>", window=30s)]]
  virtual int job(const std::string& key, const std::string& dir, int ms) {
    const std::string pid = std::to_string(::getpid());
    ::close(::open((dir + "/started-" + pid).c_str(), O_CREAT | O_WRONLY, 0644));
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    const int fd = ::open((dir + "/ran-" + key).c_str(), O_CREAT | O_WRONLY | O_APPEND, 0644);
    const std::string line = pid + "\n";
    [[maybe_unused]] auto n = ::write(fd, line.data(), line.size());
    ::close(fd);
    return ::getpid();
  }

  std::atomic<long> counter{0};
  std::atomic<int> loads{0};
};

}  // namespace forktest
