// The fencing sample: a lock alone cannot stop a writer that was paused past
// its lease; a store that checks fencing tokens can.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace fencing {

// Storage that remembers the newest fencing token that touched each key and
// refuses writes carrying an older one. Reads present the token too, so a
// newer holder's read already shuts out an older holder's late write (see
// "Read-modify-write" in docs/redis.md). Here the check and the access share
// one mutex; in a database they are one conditional statement, in Redis one
// Lua script.
class FencedStore {
 public:
  bool write(const std::string& key, int value, std::uint64_t token);
  int read(const std::string& key, std::uint64_t token);
  int value(const std::string& key) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::pair<std::uint64_t, int>> rows_;  // key -> (newest token, value)
};

class Inventory {
 public:
  explicit Inventory(FencedStore& store) : store_(store) {}
  virtual ~Inventory() = default;

  // A short fixed lease, so a slow call outlives it.
  [[lock(key="sku:<sku>", ttl=200ms, wait=2s)]]
  virtual bool restock(const std::string& sku, int qty, std::chrono::milliseconds pause);

 private:
  FencedStore& store_;
};

}  // namespace fencing
