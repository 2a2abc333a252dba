// mem:// for [[cache]]: the shared tier as a table in this process.
#include <array>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include "cache/remote_tier.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

using Clock = std::chrono::steady_clock;

class MemRemote final : public RemoteTier {
 public:
  RemoteRead get(std::string_view name, std::string_view key) override {
    std::lock_guard lock(mutex_);
    RemoteRead read{std::nullopt, version_of(name, key)};
    auto n = names_.find(std::string(name));
    if (n == names_.end()) return read;
    auto it = n->second.find(std::string(key));
    if (it == n->second.end()) return read;
    if (it->second.expires <= Clock::now()) {
      n->second.erase(it);
      return read;
    }
    read.json = it->second.json;
    return read;
  }
  bool fill(std::string_view name, std::string_view key, std::string_view json, std::chrono::milliseconds ttl,
            std::uint64_t read_version) override {
    std::lock_guard lock(mutex_);
    if (version_of(name, key) != read_version) return false;
    names_[std::string(name)][std::string(key)] = Entry{std::string(json), Clock::now() + ttl};
    return true;
  }
  void put(std::string_view name, std::string_view key, std::string_view json, std::chrono::milliseconds ttl) override {
    std::lock_guard lock(mutex_);
    bump(name, &key);
    names_[std::string(name)][std::string(key)] = Entry{std::string(json), Clock::now() + ttl};
  }
  void evict(std::string_view name, const std::string_view* key) override {
    std::lock_guard lock(mutex_);
    bump(name, key);
    auto n = names_.find(std::string(name));
    if (n == names_.end()) return;
    if (key) n->second.erase(std::string(*key));
    else names_.erase(n);
  }
  void listen(Listener) override {}
  bool live(Clock::time_point) const noexcept override { return true; }

 private:
  struct Entry {
    std::string json;
    Clock::time_point expires;
  };
  // Write versions in a fixed table of buckets (bounded memory; a key shares
  // its bucket with others, which only refuses some fills) plus a counter
  // for whole-name evictions.
  static constexpr std::size_t kBuckets = 4096;
  std::size_t bucket(std::string_view name, std::string_view key) const {
    return (std::hash<std::string_view>{}(name) * 31 + std::hash<std::string_view>{}(key)) % kBuckets;
  }
  std::uint64_t version_of(std::string_view name, std::string_view key) const {
    return versions_[bucket(name, key)] + all_evictions_;
  }
  void bump(std::string_view name, const std::string_view* key) {
    if (key) ++versions_[bucket(name, *key)];
    else ++all_evictions_;
  }
  std::mutex mutex_;
  std::unordered_map<std::string, std::unordered_map<std::string, Entry>> names_;
  std::array<std::uint64_t, kBuckets> versions_{};
  std::uint64_t all_evictions_ = 0;
};

}  // namespace

std::shared_ptr<RemoteTier> make_mem_remote(std::string_view table) {
  // One table per name in the process, like mem:// locks.
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<RemoteTier>, std::less<>> tables;  // live as long as the process, like mem:// locks
  std::lock_guard lock(mutex);
  auto& slot = tables[std::string(table)];
  if (slot) return slot;
  auto t = std::make_shared<MemRemote>();
  slot = t;
  return t;
}

}  // namespace weave::detail
