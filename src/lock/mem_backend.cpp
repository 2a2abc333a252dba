// mem:// — the embedded backend: an in-process lease table with real TTLs,
// owner tokens, fencing tokens and condition-variable waiters; every lock type
// (reentrant, fair, read, write).
#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <unordered_map>

#include "internal.h"
#include "mem_backend.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

// Process-wide, so fencing tokens increase per key across mem:// tables too.
std::atomic<std::uint64_t> g_fence{0};

struct Reader {
  Clock::time_point expires;
  std::uint64_t fence = 0;
};

struct Slot {
  // The exclusive holder: reentrant, fair or write.
  bool held = false;
  std::string owner;
  std::uint64_t fence = 0;
  Clock::time_point expires;
  std::uint64_t releases = 0;  // bumped by every release (waiters compare)
  int waiters = 0;
  std::condition_variable cv;
  // fair: waiters in arrival order, each with the expiry of its place in line.
  std::deque<std::pair<std::string, Clock::time_point>> line;
  // read / write: the live readers, and the writers waiting (place-in-line expiry).
  std::unordered_map<std::string, Reader> readers;
  std::unordered_map<std::string, Clock::time_point> writers_waiting;

  bool held_by_other(std::string_view o, Clock::time_point now) const {
    return held && expires > now && owner != o;
  }
  bool held_by(std::string_view o, Clock::time_point now) const {
    return held && expires > now && owner == o;
  }
  bool idle(Clock::time_point now) const {
    return waiters == 0 && (!held || expires <= now) && line.empty() && readers.empty() &&
           writers_waiting.empty();
  }
  // Drops readers and places in line that ran out.
  void prune(Clock::time_point now) {
    std::erase_if(line, [&](const auto& e) { return e.second <= now; });
    std::erase_if(readers, [&](const auto& r) { return r.second.expires <= now; });
    std::erase_if(writers_waiting, [&](const auto& w) { return w.second <= now; });
  }
  void take(std::string_view o, Clock::time_point now, std::chrono::milliseconds lease) {
    held = true;
    owner.assign(o);
    fence = g_fence.fetch_add(1, std::memory_order_relaxed) + 1;
    expires = now + lease;
  }
  void wake() {
    ++releases;
    cv.notify_all();
  }
};

// Heterogeneous lookup: a key is found by its string_view, no std::string made.
struct KeyHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view k) const noexcept { return std::hash<std::string_view>{}(k); }
};
struct KeyEq {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const noexcept { return a == b; }
};

// One part of the table with its own mutex: calls on keys of different
// shards never wait for each other.
struct alignas(64) Shard {
  std::mutex mutex;
  std::unordered_map<std::string, std::unique_ptr<Slot>, KeyHash, KeyEq> slots;
  unsigned ops = 0;

  Slot& slot(std::string_view key) {
    auto it = slots.find(key);
    if (it == slots.end()) it = slots.emplace(std::string(key), std::make_unique<Slot>()).first;
    return *it->second;
  }
  Slot* find(std::string_view key) {
    auto it = slots.find(key);
    return it == slots.end() ? nullptr : it->second.get();
  }
  // An idle slot is kept for the next call on its key (a hot key costs no
  // allocation) while the shard is small; past that it is dropped at once.
  void drop_if_idle(std::string_view key, Slot& s, Clock::time_point now) {
    if (slots.size() > kKeptIdle && s.idle(now)) slots.erase(slots.find(key));
  }
  // Drops leases that ran out and nobody touched (e.g. release=on_expiry),
  // and idle slots, so the table does not grow without bound. Amortised.
  void maybe_sweep(Clock::time_point now) {
    if (++ops < 4096) return;
    ops = 0;
    for (auto it = slots.begin(); it != slots.end();) {
      Slot& s = *it->second;
      s.prune(now);
      if (s.idle(now))
        it = slots.erase(it);
      else
        ++it;
    }
  }
  static constexpr std::size_t kKeptIdle = 256;
};

std::chrono::milliseconds until(Clock::time_point t, Clock::time_point now) {
  return std::max(std::chrono::milliseconds(1), std::chrono::ceil<std::chrono::milliseconds>(t - now));
}

class MemBackend final : public LockBackend, public std::enable_shared_from_this<MemBackend> {
 public:
  AcquireResult try_acquire(std::string_view key, std::string_view owner,
                            std::chrono::milliseconds lease) override {
    Shard& sh = shard(key);
    std::lock_guard g(sh.mutex);
    const auto now = Clock::now();
    sh.maybe_sweep(now);
    Slot& s = sh.slot(key);
    if (s.held_by_other(owner, now)) return {false, 0, until(s.expires, now)};
    if (s.held_by(owner, now))
      s.expires = now + lease;
    else
      s.take(owner, now, lease);
    return {true, s.fence, {}};
  }

  bool supports(LockType) const override { return true; }

  AcquireResult try_acquire_as(LockType type, std::string_view key, std::string_view owner,
                               std::chrono::milliseconds lease, std::chrono::milliseconds entry) override {
    if (type == LockType::reentrant) return try_acquire(key, owner, lease);
    Shard& sh = shard(key);
    std::lock_guard g(sh.mutex);
    const auto now = Clock::now();
    sh.maybe_sweep(now);
    Slot& s = sh.slot(key);
    s.prune(now);
    switch (type) {
      case LockType::fair: {
        if (s.held_by(owner, now)) {
          s.expires = now + lease;
          return {true, s.fence, {}};
        }
        auto mine = std::find_if(s.line.begin(), s.line.end(), [&](auto& e) { return e.first == owner; });
        if (!s.held_by_other(owner, now) && (s.line.empty() || s.line.front().first == owner)) {
          if (mine != s.line.end()) s.line.erase(mine);
          s.take(owner, now, lease);
          return {true, s.fence, {}};
        }
        if (entry.count() > 0) {
          if (mine != s.line.end())
            mine->second = now + entry;
          else
            s.line.emplace_back(std::string(owner), now + entry);
        }
        // Busy until the holder's lease or the first waiter's place runs out.
        return {false, 0, until(s.held_by_other(owner, now) ? s.expires : s.line.front().second, now)};
      }
      case LockType::read: {
        if (auto r = s.readers.find(std::string(owner)); r != s.readers.end()) {
          r->second.expires = now + lease;
          return {true, r->second.fence, {}};
        }
        if (s.held_by_other(owner, now)) return {false, 0, until(s.expires, now)};
        if (!s.writers_waiting.empty()) {  // writer preference: queue behind it
          auto first = std::min_element(s.writers_waiting.begin(), s.writers_waiting.end(),
                                        [](auto& a, auto& b) { return a.second < b.second; });
          return {false, 0, until(first->second, now)};
        }
        Reader r{now + lease, g_fence.fetch_add(1, std::memory_order_relaxed) + 1};
        s.readers.emplace(std::string(owner), r);
        return {true, r.fence, {}};
      }
      case LockType::write: {
        if (s.held_by(owner, now)) {
          s.expires = now + lease;
          return {true, s.fence, {}};
        }
        if (!s.held_by_other(owner, now) && s.readers.empty()) {
          s.writers_waiting.erase(std::string(owner));
          s.take(owner, now, lease);
          return {true, s.fence, {}};
        }
        if (entry.count() > 0) s.writers_waiting[std::string(owner)] = now + entry;
        if (s.held_by_other(owner, now)) return {false, 0, until(s.expires, now)};
        auto last = std::max_element(s.readers.begin(), s.readers.end(), [](auto& a, auto& b) {
          return a.second.expires < b.second.expires;
        });
        return {false, 0, until(last->second.expires, now)};
      }
      case LockType::reentrant:
        break;
    }
    return try_acquire(key, owner, lease);
  }

  ReleaseResult release_as(LockType type, std::string_view key, std::string_view owner) override {
    if (type != LockType::read) return release(key, owner);
    Shard& sh = shard(key);
    std::lock_guard g(sh.mutex);
    Slot* found = sh.find(key);
    if (!found) return ReleaseResult::lost;
    Slot& s = *found;
    auto r = s.readers.find(std::string(owner));
    if (r == s.readers.end()) return ReleaseResult::lost;
    const auto now = Clock::now();
    const bool in_time = r->second.expires > now;
    s.readers.erase(r);
    s.prune(now);
    if (s.readers.empty()) s.wake();  // a writer may go now
    sh.drop_if_idle(key, s, now);
    return in_time ? ReleaseResult::released : ReleaseResult::lost;
  }

  void leave_queue(LockType type, std::string_view key, std::string_view owner) override {
    Shard& sh = shard(key);
    std::lock_guard g(sh.mutex);
    Slot* found = sh.find(key);
    if (!found) return;
    Slot& s = *found;
    bool left = false;
    if (type == LockType::fair) {
      left = std::erase_if(s.line, [&](auto& e) { return e.first == owner; }) > 0;
    } else if (type == LockType::write) {
      left = s.writers_waiting.erase(std::string(owner)) > 0;
    }
    if (left) s.wake();  // the next in line (or held-back readers) may go now
    sh.drop_if_idle(key, s, Clock::now());
  }

  ReleaseResult release(std::string_view key, std::string_view owner) override {
    Shard& sh = shard(key);
    std::lock_guard g(sh.mutex);
    Slot* found = sh.find(key);
    if (!found) return ReleaseResult::lost;
    Slot& s = *found;
    if (!s.held || s.owner != owner) return ReleaseResult::lost;
    const auto now = Clock::now();
    const bool in_time = s.expires > now;
    s.held = false;
    s.owner.clear();
    s.wake();
    sh.drop_if_idle(key, s, now);
    return in_time ? ReleaseResult::released : ReleaseResult::lost;
  }

  std::vector<RenewResult> renew_batch(std::span<const RenewItem> items) override {
    std::vector<RenewResult> out;
    out.reserve(items.size());
    const auto now = Clock::now();
    for (const RenewItem& item : items) {
      Shard& sh = shard(item.key);
      std::lock_guard g(sh.mutex);
      Slot* s = sh.find(item.key);
      bool owned = false;
      if (s && item.type == LockType::read) {
        auto r = s->readers.find(std::string(item.owner_token));
        if (r != s->readers.end() && r->second.expires > now) {
          r->second.expires = now + item.lease;
          owned = true;
        }
      } else if (s && s->held_by(item.owner_token, now)) {
        s->expires = now + item.lease;
        owned = true;
      }
      out.push_back(owned ? RenewResult::owned : RenewResult::lost);
    }
    return out;
  }

  std::unique_ptr<LockWaiter> prepare_wait(std::string_view key) override;

 private:
  class Waiter;

  Shard& shard(std::string_view key) { return shards_[KeyHash{}(key) % shards_.size()]; }

  std::array<Shard, 64> shards_;
};

class MemBackend::Waiter final : public LockWaiter {
 public:
  Waiter(std::shared_ptr<MemBackend> b, Shard& shard, std::string key, Slot* s, std::uint64_t seen)
      : backend_(std::move(b)), shard_(shard), key_(std::move(key)), slot_(s), seen_(seen) {}

  bool wait_until(Clock::time_point deadline) override {
    std::unique_lock lk(shard_.mutex);
    auto released = [&] { return slot_->releases != seen_; };
    if (deadline == Clock::time_point::max()) {
      slot_->cv.wait(lk, released);
      return true;
    }
    return slot_->cv.wait_until(lk, deadline, released);
  }

  ~Waiter() override {
    std::lock_guard g(shard_.mutex);
    --slot_->waiters;
    shard_.drop_if_idle(key_, *slot_, Clock::now());
  }

 private:
  std::shared_ptr<MemBackend> backend_;  // keeps the shard alive
  Shard& shard_;
  std::string key_;
  Slot* slot_;  // kept in the table while waiters > 0
  std::uint64_t seen_;
};

std::unique_ptr<LockWaiter> MemBackend::prepare_wait(std::string_view key) {
  Shard& sh = shard(key);
  std::lock_guard g(sh.mutex);
  Slot& s = sh.slot(key);
  ++s.waiters;
  return std::make_unique<Waiter>(shared_from_this(), sh, std::string(key), &s, s.releases);
}

}  // namespace

std::shared_ptr<LockBackend> make_mem_backend() { return std::make_shared<MemBackend>(); }

}  // namespace weave::detail
