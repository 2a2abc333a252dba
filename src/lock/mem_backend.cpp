// mem:// — the embedded backend: an in-process lease table with real TTLs,
// owner tokens, fencing tokens and condition-variable waiters; every lock type
// (reentrant, fair, read, write).
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <unordered_map>

#include "internal.h"
#include "mem_backend.h"

namespace weave::detail {
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

std::chrono::milliseconds until(Clock::time_point t, Clock::time_point now) {
  return std::max(std::chrono::milliseconds(1), std::chrono::ceil<std::chrono::milliseconds>(t - now));
}

class MemBackend final : public LockBackend, public std::enable_shared_from_this<MemBackend> {
 public:
  AcquireResult try_acquire(std::string_view key, std::string_view owner,
                            std::chrono::milliseconds lease) override {
    std::lock_guard g(mutex_);
    const auto now = Clock::now();
    maybe_sweep(now);
    Slot& s = slot(key);
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
    std::lock_guard g(mutex_);
    const auto now = Clock::now();
    maybe_sweep(now);
    Slot& s = slot(key);
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
    std::lock_guard g(mutex_);
    auto it = slots_.find(std::string(key));
    if (it == slots_.end()) return ReleaseResult::lost;
    Slot& s = *it->second;
    auto r = s.readers.find(std::string(owner));
    if (r == s.readers.end()) return ReleaseResult::lost;
    const auto now = Clock::now();
    const bool in_time = r->second.expires > now;
    s.readers.erase(r);
    s.prune(now);
    if (s.readers.empty()) s.wake();  // a writer may go now
    if (s.idle(now)) slots_.erase(it);
    return in_time ? ReleaseResult::released : ReleaseResult::lost;
  }

  void leave_queue(LockType type, std::string_view key, std::string_view owner) override {
    std::lock_guard g(mutex_);
    auto it = slots_.find(std::string(key));
    if (it == slots_.end()) return;
    Slot& s = *it->second;
    bool left = false;
    if (type == LockType::fair) {
      left = std::erase_if(s.line, [&](auto& e) { return e.first == owner; }) > 0;
    } else if (type == LockType::write) {
      left = s.writers_waiting.erase(std::string(owner)) > 0;
    }
    if (left) s.wake();  // the next in line (or held-back readers) may go now
    if (s.idle(Clock::now())) slots_.erase(it);
  }

  ReleaseResult release(std::string_view key, std::string_view owner) override {
    std::lock_guard g(mutex_);
    auto it = slots_.find(std::string(key));
    if (it == slots_.end()) return ReleaseResult::lost;
    Slot& s = *it->second;
    if (!s.held || s.owner != owner) return ReleaseResult::lost;
    const auto now = Clock::now();
    const bool in_time = s.expires > now;
    s.held = false;
    s.owner.clear();
    s.wake();
    if (s.idle(now)) slots_.erase(it);
    return in_time ? ReleaseResult::released : ReleaseResult::lost;
  }

  std::vector<RenewResult> renew_batch(std::span<const RenewItem> items) override {
    std::vector<RenewResult> out;
    out.reserve(items.size());
    std::lock_guard g(mutex_);
    const auto now = Clock::now();
    for (const RenewItem& item : items) {
      auto it = slots_.find(std::string(item.key));
      bool owned = false;
      if (it != slots_.end() && item.type == LockType::read) {
        auto r = it->second->readers.find(std::string(item.owner_token));
        if (r != it->second->readers.end() && r->second.expires > now) {
          r->second.expires = now + item.lease;
          owned = true;
        }
      } else if (it != slots_.end() && it->second->held_by(item.owner_token, now)) {
        it->second->expires = now + item.lease;
        owned = true;
      }
      out.push_back(owned ? RenewResult::owned : RenewResult::lost);
    }
    return out;
  }

  std::unique_ptr<LockWaiter> prepare_wait(std::string_view key) override;

 private:
  class Waiter;

  Slot& slot(std::string_view key) {
    auto [it, inserted] = slots_.try_emplace(std::string(key));
    if (inserted) it->second = std::make_unique<Slot>();
    return *it->second;
  }

  // Drops leases that ran out and nobody touched (e.g. release=on_expiry),
  // so the table does not grow without bound. Amortised over many calls.
  void maybe_sweep(Clock::time_point now) {
    if (++ops_ < 4096) return;
    ops_ = 0;
    for (auto it = slots_.begin(); it != slots_.end();) {
      Slot& s = *it->second;
      s.prune(now);
      if (s.idle(now))
        it = slots_.erase(it);
      else
        ++it;
    }
  }

  std::mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<Slot>> slots_;
  unsigned ops_ = 0;
};

class MemBackend::Waiter final : public LockWaiter {
 public:
  Waiter(std::shared_ptr<MemBackend> b, std::string key, Slot* s, std::uint64_t seen)
      : backend_(std::move(b)), key_(std::move(key)), slot_(s), seen_(seen) {}

  bool wait_until(Clock::time_point deadline) override {
    std::unique_lock lk(backend_->mutex_);
    auto released = [&] { return slot_->releases != seen_; };
    if (deadline == Clock::time_point::max()) {
      slot_->cv.wait(lk, released);
      return true;
    }
    return slot_->cv.wait_until(lk, deadline, released);
  }

  ~Waiter() override {
    std::lock_guard g(backend_->mutex_);
    if (--slot_->waiters == 0 && slot_->idle(Clock::now())) backend_->slots_.erase(key_);
  }

 private:
  std::shared_ptr<MemBackend> backend_;
  std::string key_;
  Slot* slot_;  // kept in the table while waiters > 0
  std::uint64_t seen_;
};

std::unique_ptr<LockWaiter> MemBackend::prepare_wait(std::string_view key) {
  std::lock_guard g(mutex_);
  Slot& s = slot(key);
  ++s.waiters;
  return std::make_unique<Waiter>(shared_from_this(), std::string(key), &s, s.releases);
}

}  // namespace

std::shared_ptr<LockBackend> make_mem_backend() { return std::make_shared<MemBackend>(); }

}  // namespace weave::detail
