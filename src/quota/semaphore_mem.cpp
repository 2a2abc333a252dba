// mem:// semaphores: each key's holders and line in a table of this process,
// the same steps as the Redis scripts (scripts/permit_*.lua) on steady_clock.
#include <fnmatch.h>

#include <algorithm>
#include <deque>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/feature_runtime.h"
#include "core/key_hash.h"
#include "core/process.h"
#include "quota/semaphore_store.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

milliseconds ms_until(Clock::time_point t, Clock::time_point now) {
  return std::max(milliseconds(1), std::chrono::ceil<milliseconds>(t - now));
}

struct Holder {
  Clock::time_point deadline;
  std::uint64_t token = 0;
};
struct Place {
  std::string owner;
  Clock::time_point until;
};

// One key: its holders and its line (arrival order).
struct Semaphore {
  std::map<std::string, Holder, std::less<>> holders;
  std::deque<Place> line;
  void drop_dead(Clock::time_point now, std::uint32_t& reclaimed) {
    reclaimed += static_cast<std::uint32_t>(std::erase_if(holders, [now](const auto& h) { return h.second.deadline <= now; }));
    drop_gone_places(now);
  }
  // Waiters whose place ran out (they stopped asking) leave the line.
  void drop_gone_places(Clock::time_point now) {
    std::erase_if(line, [now](const Place& p) { return p.until <= now; });
  }
  bool idle() const { return holders.empty() && line.empty(); }
};

// A waiter on the table's bell.
class BellWaiter final : public PermitWaiter {
 public:
  explicit BellWaiter(std::unique_ptr<ChangeWaiter> bell) : bell_(std::move(bell)) {}
  bool wait_until(Clock::time_point deadline) override { return bell_->wait_until(deadline); }
  bool wake_on_change(std::function<void()> wake) override { return bell_->wake_on_change(std::move(wake)); }

 private:
  std::unique_ptr<ChangeWaiter> bell_;
};

class MemSemaphores final : public SemaphoreStore {
 public:
  PermitGrant acquire(const PermitRequest& r) override {
    const auto now = Clock::now();
    Guard g(mutex_);
    sweep_locked(now);
    auto it = keys_.find(r.key);
    if (it == keys_.end()) it = keys_.emplace(std::string(r.key), Semaphore{}).first;
    Semaphore& s = it->second;
    PermitGrant out;
    s.drop_dead(now, out.reclaimed);
    if (auto h = s.holders.find(r.owner); h != s.holders.end()) {  // asked again: the same grant, extended
      h->second.deadline = now + r.lease;
      out.granted = true;
      out.fencing_token = h->second.token;
      return out;
    }
    const auto mine = std::find_if(s.line.begin(), s.line.end(), [&](const Place& p) { return p.owner == r.owner; });
    const auto ahead = static_cast<std::int64_t>(mine - s.line.begin());  // (the line's length when not in it)
    const auto free = static_cast<std::int64_t>(r.permits) - static_cast<std::int64_t>(s.holders.size());
    if (ahead < free) {
      if (mine != s.line.end()) s.line.erase(mine);
      out.fencing_token = next_token_locked(now);
      s.holders[std::string(r.owner)] = Holder{now + r.lease, out.fencing_token};
      if (out.reclaimed > 1 && !s.line.empty()) changed_locked();
      out.granted = true;
      return out;
    }
    if (r.place.count() > 0) {
      if (mine != s.line.end())
        mine->until = now + r.place;
      else
        s.line.push_back({std::string(r.owner), now + r.place});
    }
    // Worth asking again when the first holder's lease runs out, or (permits
    // free, waiters ahead) when the first waiter's place does.
    Clock::time_point next = Clock::time_point::max();
    if (free > 0) {
      for (const Place& p : s.line) next = std::min(next, p.until);
    } else {
      for (const auto& [owner, h] : s.holders) next = std::min(next, h.deadline);
    }
    out.retry_in = next == Clock::time_point::max() ? milliseconds(1) : ms_until(next, now);
    return out;
  }

  std::vector<bool> renew(std::span<const Renewal> items) override {
    const auto now = Clock::now();
    std::vector<bool> out;
    out.reserve(items.size());
    Guard g(mutex_);
    for (const Renewal& r : items) {
      Holder* h = holder_locked(r.key, r.owner);
      const bool owned = h && h->deadline > now;
      if (owned) h->deadline = now + r.lease;
      out.push_back(owned);
    }
    return out;
  }

  bool release(const PermitRequest& r) override {
    const auto now = Clock::now();
    Guard g(mutex_);
    auto it = keys_.find(r.key);
    if (it == keys_.end()) return false;
    auto h = it->second.holders.find(r.owner);
    if (h == it->second.holders.end()) return false;
    const bool in_time = h->second.deadline > now;
    give_back_locked(it, h, r, now);
    return in_time;
  }

  void leave_line(const PermitRequest& r) override {
    const auto now = Clock::now();
    Guard g(mutex_);
    auto it = keys_.find(r.key);
    if (it == keys_.end()) return;
    Semaphore& s = it->second;
    if (auto h = s.holders.find(r.owner); h != s.holders.end()) {  // granted by a release meanwhile
      give_back_locked(it, h, r, now);
      return;
    }
    if (std::erase_if(s.line, [&](const Place& p) { return p.owner == r.owner; }) > 0 && !s.line.empty())
      changed_locked();
    if (s.idle()) keys_.erase(it);
  }

  // The waiter sees a release's grant when it asks again (acquire: the
  // holder's grant, extended): no request crosses a network here.
  std::unique_ptr<PermitWaiter> prepare_wait(std::string_view, std::string&, WaitOn) override {
    return std::make_unique<BellWaiter>(changes_->waiter());
  }

  std::vector<SemaphoreState> list(std::string_view pattern) override {
    const std::string glob(pattern);
    const auto now = Clock::now();
    std::vector<SemaphoreState> out;
    Guard g(mutex_);
    for (const auto& [key, s] : keys_) {
      if (::fnmatch(glob.c_str(), key.c_str(), 0) != 0) continue;
      SemaphoreState st;
      st.key = key;
      for (const auto& [owner, h] : s.holders)
        if (h.deadline > now) st.holders.push_back({owner, h.token, ms_until(h.deadline, now)});
      st.waiting = static_cast<std::size_t>(std::count_if(s.line.begin(), s.line.end(), [now](const Place& p) { return p.until > now; }));
      if (!st.holders.empty() || st.waiting > 0) out.push_back(std::move(st));
    }
    return out;
  }

  bool in_process() const noexcept override { return true; }

 private:
  Holder* holder_locked(std::string_view key, std::string_view owner) WEAVE_REQUIRES(mutex_) {
    auto it = keys_.find(key);
    if (it == keys_.end()) return nullptr;
    auto h = it->second.holders.find(owner);
    return h == it->second.holders.end() ? nullptr : &h->second;
  }
  // permit_release.lua's give_back: the permit goes to the first waiter in
  // line while fewer than `r.permits` are held, else the line is woken.
  void give_back_locked(KeyMap<Semaphore>::iterator it, std::map<std::string, Holder, std::less<>>::iterator h,
                        const PermitRequest& r, Clock::time_point now) WEAVE_REQUIRES(mutex_) {
    Semaphore& s = it->second;
    s.holders.erase(h);
    s.drop_gone_places(now);
    if (!s.line.empty()) {
      if (s.holders.size() < r.permits) {
        s.holders[std::move(s.line.front().owner)] = Holder{now + r.place, next_token_locked(now)};
        s.line.pop_front();
      }
      changed_locked();
    }
    if (s.idle()) keys_.erase(it);
  }
  std::uint64_t next_token_locked(Clock::time_point now) WEAVE_REQUIRES(mutex_) {
    last_token_ = std::max(last_token_ + 1, static_cast<std::uint64_t>(now.time_since_epoch().count()));
    return last_token_;
  }
  // Keys whose holders and waiters all ran out go in batches, so memory
  // follows the live keys.
  void sweep_locked(Clock::time_point now) WEAVE_REQUIRES(mutex_) {
    if (keys_.size() < next_sweep_) return;
    for (auto it = keys_.begin(); it != keys_.end();) {
      std::uint32_t reclaimed = 0;
      it->second.drop_dead(now, reclaimed);
      it = it->second.idle() ? keys_.erase(it) : std::next(it);
    }
    next_sweep_ = std::max<std::size_t>(1024, keys_.size() * 2);
  }
  // A permit came free or the line moved: every waiter asks again.
  void changed_locked() WEAVE_REQUIRES(mutex_) { changes_->ring(); }

  Mutex mutex_;
  const std::shared_ptr<ChangeBell> changes_ = std::make_shared<ChangeBell>();  // for the waiters
  KeyMap<Semaphore> keys_ WEAVE_GUARDED_BY(mutex_);
  // Fencing tokens of the table: above the last one and at least the
  // clock's nanoseconds, so a table made again later starts above them.
  std::uint64_t last_token_ WEAVE_GUARDED_BY(mutex_) = 0;
  std::size_t next_sweep_ WEAVE_GUARDED_BY(mutex_) = 1024;
};

}  // namespace

std::shared_ptr<SemaphoreStore> make_mem_semaphores(std::string_view table) {
  return mem_table<SemaphoreStore>(table, [] { return std::make_shared<MemSemaphores>(); });
}

}  // namespace weave::detail
