// mem:// — the embedded backend: an in-process lease table with real TTLs,
// owner tokens, fencing tokens and condition-variable waiters.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <unordered_map>

#include "internal.h"
#include "mem_backend.h"

namespace weave::detail {
namespace {

// Process-wide, so fencing tokens increase per key across mem:// tables too.
std::atomic<std::uint64_t> g_fence{0};

struct Slot {
  bool held = false;
  std::string owner;
  std::uint64_t fence = 0;
  Clock::time_point expires;
  std::uint64_t releases = 0;  // bumped by every release (waiters compare)
  int waiters = 0;
  std::condition_variable cv;
};

class MemBackend final : public LockBackend, public std::enable_shared_from_this<MemBackend> {
 public:
  AcquireResult try_acquire(std::string_view key, std::string_view owner,
                            std::chrono::milliseconds lease) override {
    std::lock_guard g(mutex_);
    const auto now = Clock::now();
    maybe_sweep(now);
    Slot& s = slot(key);
    if (s.held && s.expires > now && s.owner != owner) {
      return {false, 0, std::chrono::ceil<std::chrono::milliseconds>(s.expires - now)};
    }
    if (!(s.held && s.owner == owner && s.expires > now)) {
      s.held = true;
      s.owner.assign(owner);
      s.fence = g_fence.fetch_add(1, std::memory_order_relaxed) + 1;
    }
    s.expires = now + lease;
    return {true, s.fence, {}};
  }

  ReleaseResult release(std::string_view key, std::string_view owner) override {
    std::lock_guard g(mutex_);
    auto it = slots_.find(std::string(key));
    if (it == slots_.end()) return ReleaseResult::lost;
    Slot& s = *it->second;
    if (!s.held || s.owner != owner) return ReleaseResult::lost;
    const bool in_time = s.expires > Clock::now();
    s.held = false;
    s.owner.clear();
    ++s.releases;
    s.cv.notify_all();
    if (s.waiters == 0) slots_.erase(it);
    return in_time ? ReleaseResult::released : ReleaseResult::lost;
  }

  std::vector<RenewResult> renew_batch(std::span<const RenewItem> items) override {
    std::vector<RenewResult> out;
    out.reserve(items.size());
    std::lock_guard g(mutex_);
    const auto now = Clock::now();
    for (const RenewItem& item : items) {
      auto it = slots_.find(std::string(item.key));
      if (it != slots_.end() && it->second->held && it->second->owner == item.owner_token &&
          it->second->expires > now) {
        it->second->expires = now + item.lease;
        out.push_back(RenewResult::owned);
      } else {
        out.push_back(RenewResult::lost);
      }
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
      if (s.waiters == 0 && (!s.held || s.expires <= now))
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
    if (--slot_->waiters == 0 && !slot_->held) backend_->slots_.erase(key_);
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
