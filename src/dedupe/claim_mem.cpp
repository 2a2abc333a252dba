// mem:// for [[dedupe]]: records in a table in this process, with a
// generation per table that waiters block on (woken, not polling).
#include <map>
#include <mutex>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dedupe/claim_store.h"
#include "core/feature_runtime.h"
#include "core/key_hash.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

using Clock = std::chrono::steady_clock;

class MemClaims final : public ClaimStore {
 public:
  ClaimOutcome claim(std::string_view key, std::string_view owner, std::string_view match,
                     std::chrono::milliseconds lease) override {
    Guard g(mutex_);
    const auto now = Clock::now();
    sweep_locked(now);
    auto it = records_.find(key);
    ClaimOutcome out;
    if (it != records_.end() && it->second.expires > now) {
      out.existing = it->second.record;
      out.ttl_left = std::chrono::ceil<std::chrono::milliseconds>(it->second.expires - now);
      return out;
    }
    records_[std::string(key)] = Entry{DedupeRecord{'r', std::string(match), std::string(owner)}, now + lease};
    out.claimed = true;
    return out;
  }

  std::optional<ClaimOutcome> read(std::string_view key) override {
    Guard g(mutex_);
    const auto now = Clock::now();
    auto it = records_.find(key);
    if (it == records_.end() || it->second.expires <= now) return std::nullopt;
    ClaimOutcome out;
    out.existing = it->second.record;
    out.ttl_left = std::chrono::ceil<std::chrono::milliseconds>(it->second.expires - now);
    if (it->second.record.kind != 'r')
      out.age = std::chrono::duration_cast<std::chrono::milliseconds>(now - it->second.written);
    return out;
  }

  bool finish(std::string_view key, std::string_view owner, std::string_view, const DedupeRecord& outcome,
              std::chrono::milliseconds window) override {
    Guard g(mutex_);
    auto it = owned_locked(key, owner);
    if (it == records_.end()) return false;
    const auto now = Clock::now();
    it->second = Entry{outcome, now + window, now};
    wake_locked();
    return true;
  }

  bool forget(std::string_view key, std::string_view owner, std::string_view) override {
    Guard g(mutex_);
    auto it = owned_locked(key, owner);
    if (it == records_.end()) return false;
    records_.erase(it);
    wake_locked();
    return true;
  }

  std::vector<bool> renew(std::span<const Renewal> items) override {
    Guard g(mutex_);
    std::vector<bool> out;
    for (const Renewal& r : items) {
      auto it = owned_locked(r.key, r.owner);
      if (it != records_.end()) it->second.expires = Clock::now() + r.lease;
      out.push_back(it != records_.end());
    }
    return out;
  }

  std::unique_ptr<ClaimWaiter> prepare_wait(std::string_view) override { return changes_->waiter(); }

 private:
  struct Entry {
    DedupeRecord record;
    Clock::time_point expires;
    Clock::time_point written{};  // when the outcome was written (finish)
  };
  KeyMap<Entry>::iterator owned_locked(std::string_view key, std::string_view owner)
      WEAVE_REQUIRES(mutex_) {
    auto it = records_.find(key);
    if (it == records_.end() || it->second.record.kind != 'r' || it->second.record.rest != owner ||
        it->second.expires <= Clock::now())
      return records_.end();
    return it;
  }
  void wake_locked() WEAVE_REQUIRES(mutex_) { changes_->ring(); }
  // Expired records go in batches, so memory follows the live records.
  void sweep_locked(Clock::time_point now) WEAVE_REQUIRES(mutex_) {
    if (records_.size() < next_sweep_) return;
    for (auto it = records_.begin(); it != records_.end();)
      it = it->second.expires <= now ? records_.erase(it) : std::next(it);
    next_sweep_ = std::max<std::size_t>(1024, records_.size() * 2);
  }

  Mutex mutex_;
  const std::shared_ptr<ChangeBell> changes_ = std::make_shared<ChangeBell>();  // for the waiters
  KeyMap<Entry> records_ WEAVE_GUARDED_BY(mutex_);
  std::size_t next_sweep_ WEAVE_GUARDED_BY(mutex_) = 1024;
};

}  // namespace

std::shared_ptr<ClaimStore> make_mem_claims(std::string_view table) {
  return mem_table<ClaimStore>(table, [] { return std::make_shared<MemClaims>(); });
}

}  // namespace weave::detail
