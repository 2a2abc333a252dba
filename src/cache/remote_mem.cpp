// mem:// for [[cache]]: the shared tier as a table in this process.
#include <algorithm>
#include <array>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "cache/remote_tier.h"
#include "core/feature_runtime.h"
#include "core/key_hash.h"
#include "core/wake_list.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

using Clock = std::chrono::steady_clock;

class MemRemote final : public RemoteTier {
 public:
  RemoteRead get(std::string_view name, std::string_view key) override {
    Guard lock(mutex_);
    RemoteRead read{std::nullopt, version_of(name, key)};
    if (const Entry* e = entry(name, key)) {
      read.json = e->json;
      read.written_ms = e->written_ms;
    }
    read.absent = read.version == 0 && !read.json;
    return read;
  }
  std::optional<std::uint64_t> version_for_load(std::string_view, std::string_view, std::chrono::milliseconds) override {
    return 0;  // the table goes only with this process, and every load with it
  }

  bool fill(std::string_view name, std::string_view key, std::string_view json, std::chrono::milliseconds ttl,
            std::uint64_t read_version, std::string_view token) override {
    Guard lock(mutex_);
    drop_leases(name, key, token);
    changed();
    if (version_of(name, key) != read_version) return false;
    names_[std::string(name)][std::string(key)] = Entry{std::string(json), Clock::now() + ttl, wall_ms()};
    return true;
  }
  bool put(std::string_view name, std::string_view key, std::string_view json, std::chrono::milliseconds ttl) override {
    Guard lock(mutex_);
    bump(name, &key);
    names_[std::string(name)][std::string(key)] = Entry{std::string(json), Clock::now() + ttl, wall_ms()};
    changed();
    return false;  // no other process: no message
  }
  bool evict(std::string_view name, const std::string_view* key) override {
    Guard lock(mutex_);
    bump(name, key);
    changed();
    auto n = names_.find(std::string(name));
    if (n == names_.end()) return false;
    if (key) n->second.erase(std::string(*key));
    else names_.erase(n);
    return false;
  }
  std::uint64_t stored_keys(std::string_view name) override {
    Guard lock(mutex_);
    auto n = names_.find(std::string(name));
    if (n == names_.end()) return 0;
    const auto now = Clock::now();
    std::uint64_t live = 0;
    for (const auto& [key, e] : n->second) live += e.expires > now ? 1 : 0;
    return live;
  }
  std::unique_ptr<FillWaiter> watch_fill(std::string_view, std::string_view) override {
    Guard lock(mutex_);
    return std::make_unique<Waiter>(*this, changes_);
  }
  FillClaimed try_claim_fill(std::string_view name, std::string_view key, std::string_view token,
                             std::chrono::milliseconds lease, std::uint64_t read_version) override {
    Guard lock(mutex_);
    if (entry(name, key) || version_of(name, key) != read_version) return {FillClaim::read_again};
    const auto now = Clock::now();
    Lease& held = leases_[lease_key('f', name, key)];
    // (A repeat of the token's own claim is answered as the first was.)
    if (!held.token.empty() && held.expires > now && held.token != token) return {FillClaim::held, held.expires};
    held = Lease{std::string(token), now + lease};
    return {FillClaim::load};
  }
  bool claim_refresh(std::string_view name, std::string_view key, const RemoteRead& read, std::string_view token,
                     std::chrono::milliseconds lease) override {
    Guard lock(mutex_);
    const Entry* e = entry(name, key);
    if (!e || version_of(name, key) != read.version || e->written_ms != read.written_ms) return false;
    const auto now = Clock::now();
    Lease& held = leases_[lease_key('r', name, key)];
    if (!held.token.empty() && held.expires > now && held.token != token) return false;
    held = Lease{std::string(token), now + lease};
    return true;
  }
  void release(std::string_view name, std::string_view key, std::string_view token) override {
    Guard lock(mutex_);
    drop_leases(name, key, token);
    changed();
  }
  std::vector<bool> renew(std::span<const LeaseRenewal> items) override {
    Guard lock(mutex_);
    const auto now = Clock::now();
    std::vector<bool> out;
    for (const LeaseRenewal& item : items) {
      bool held = false;
      for (char kind : {'f', 'r'}) {
        auto it = leases_.find(lease_key(kind, item.name, item.key));
        if (it == leases_.end() || it->second.token != item.token || it->second.expires <= now) continue;
        it->second.expires = now + item.lease;
        held = true;
      }
      out.push_back(held);
    }
    return out;
  }
  void listen(Listener) override {}
  bool live(Clock::time_point) const noexcept override { return true; }
  bool in_process() const noexcept override { return true; }

 private:
  struct Entry {
    std::string json;
    Clock::time_point expires;
    std::int64_t written_ms = 0;
  };
  struct Lease {
    std::string token;
    Clock::time_point expires;
  };
  // Woken by any change of the table (rare: only sync misses wait).
  class Waiter final : public FillWaiter {
   public:
    Waiter(MemRemote& table, std::uint64_t seen) : table_(table), seen_(seen) {}
    ~Waiter() override {
      Guard lock(table_.mutex_);
      table_.wakes_.drop(this);
    }
    bool wait_until(Clock::time_point until) override {
      Guard lock(table_.mutex_);
      return table_.mutex_.wait_until(table_.cv_, until,
                                      [&]() WEAVE_REQUIRES(table_.mutex_) { return table_.changes_ != seen_; });
    }
    bool wake_on_change(std::function<void()> wake) override {
      bool armed;
      {
        Guard lock(table_.mutex_);
        armed = table_.wakes_.arm(this, wake, /*changed=*/table_.changes_ != seen_);
      }
      if (!armed) wake();
      return true;
    }

   private:
    MemRemote& table_;  // the waiter's caller holds the runtime that holds the table
    const std::uint64_t seen_;
  };
  // The live entry, or null (an expired one is dropped).
  const Entry* entry(std::string_view name, std::string_view key) WEAVE_REQUIRES(mutex_) {
    auto n = names_.find(std::string(name));
    if (n == names_.end()) return nullptr;
    auto it = n->second.find(key);
    if (it == n->second.end()) return nullptr;
    if (it->second.expires <= Clock::now()) {
      n->second.erase(it);
      return nullptr;
    }
    return &it->second;
  }
  static std::string lease_key(char kind, std::string_view name, std::string_view key) {
    std::string k(1, kind);
    k += std::to_string(name.size());
    k += ':';
    k += name;
    k += key;
    return k;
  }
  void drop_leases(std::string_view name, std::string_view key, std::string_view token) WEAVE_REQUIRES(mutex_) {
    for (char kind : {'f', 'r'}) {
      auto it = leases_.find(lease_key(kind, name, key));
      if (it != leases_.end() && it->second.token == token) leases_.erase(it);
    }
    // Leases of callers that never came back (a refresh that failed) go once expired.
    if (leases_.size() > 1024)
      std::erase_if(leases_, [now = Clock::now()](const auto& l) { return l.second.expires <= now; });
  }
  void changed() WEAVE_REQUIRES(mutex_) {
    ++changes_;
    cv_.notify_all();
    wakes_.fire();
  }
  // Write versions in a fixed table of buckets (bounded memory; a key shares
  // its bucket with others, which only refuses some fills) plus a counter
  // for whole-name evictions.
  static constexpr std::size_t kBuckets = 4096;
  std::size_t bucket(std::string_view name, std::string_view key) const {
    return (key_hash(name) * 31 + key_hash(key)) % kBuckets;
  }
  std::uint64_t version_of(std::string_view name, std::string_view key) const WEAVE_REQUIRES(mutex_) {
    return versions_[bucket(name, key)] + all_evictions_;
  }
  void bump(std::string_view name, const std::string_view* key) WEAVE_REQUIRES(mutex_) {
    if (key) ++versions_[bucket(name, *key)];
    else ++all_evictions_;
  }
  Mutex mutex_;
  std::condition_variable cv_;                         // fill waiters with a thread
  WakeList wakes_ WEAVE_GUARDED_BY(mutex_);            // and without (Waiter::wake_on_change)
  std::uint64_t changes_ WEAVE_GUARDED_BY(mutex_) = 0;  // bumped by every fill, put, evict and release
  std::unordered_map<std::string, KeyMap<Entry>> names_ WEAVE_GUARDED_BY(mutex_);
  KeyMap<Lease> leases_ WEAVE_GUARDED_BY(mutex_);
  std::array<std::uint64_t, kBuckets> versions_ WEAVE_GUARDED_BY(mutex_){};
  std::uint64_t all_evictions_ WEAVE_GUARDED_BY(mutex_) = 0;
};

}  // namespace

std::shared_ptr<RemoteTier> make_mem_remote(std::string_view table) {
  return mem_table<RemoteTier>(table, [] { return std::make_shared<MemRemote>(); });
}

}  // namespace weave::detail
