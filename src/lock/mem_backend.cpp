// mem:// — the embedded backend: an in-process lease table with real TTLs,
// owner tokens, fencing tokens and condition-variable waiters; every lock type
// (reentrant, fair, read, write).
#include <fnmatch.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "internal.h"
#include "core/key_hash.h"
#include "core/wake_list.h"
#include "mem_backend.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

// Fencing tokens: each slot counts its own (no cache line shared by the
// calls on different keys), from at least the steady clock's nanoseconds, so
// a key's tokens increase across its slots (dropped when idle, made again)
// and across mem:// tables too; `g_fence` keeps the highest token of every
// dropped slot, where a new slot starts.
std::atomic<std::uint64_t> g_fence{0};

struct Reader {
  Clock::time_point expires;
  std::uint64_t fence = 0;
};

// An owner token as a slot keeps it. One of 8 to 16 characters (Weave's own
// are 15) sits in place as two overlapping words, so taking a key, checking
// its holder and remembering who released it move or compare two words; any
// other (the LockBackend API takes any text) goes to a std::string.
class SlotOwner {
 public:
  void assign(std::string_view o) {
    size_ = o.size();
    if (spilled()) {
      long_.assign(o);
    } else if (size_ != 0) {
      const std::uint64_t head = key_hash_detail::load8(o.data()), tail = key_hash_detail::load8(o.data() + size_ - 8);
      std::memcpy(text_, &head, 8);
      std::memcpy(text_ + size_ - 8, &tail, 8);
    }
  }
  void clear() noexcept { size_ = 0; }
  bool empty() const noexcept { return size_ == 0; }
  bool operator==(std::string_view o) const noexcept {
    if (o.size() != size_) return false;
    if (spilled()) return long_ == o;
    using key_hash_detail::load8;
    return size_ == 0 || (load8(text_) == load8(o.data()) && load8(text_ + size_ - 8) == load8(o.data() + size_ - 8));
  }
  std::string_view view() const noexcept { return spilled() ? std::string_view(long_) : std::string_view(text_, size_); }

 private:
  bool spilled() const noexcept { return size_ != 0 && (size_ < 8 || size_ > sizeof text_); }
  char text_[16];
  std::size_t size_ = 0;
  std::string long_;  // when spilled() (else stale)
};

// One key's state, guarded by its shard's mutex (Shard::mutex, below: the
// analysis cannot name another object's lock from here).
struct Slot {
  // The exclusive holder: reentrant, fair or write.
  bool held = false;
  SlotOwner owner;
  // The owner whose release in time freed the key last: the same release
  // made again answers released (release.lua keeps it in L:released_by).
  // Kept while the slot is.
  SlotOwner released_by;
  std::uint64_t fence = 0;
  Clock::time_point expires;
  std::uint64_t releases = 0;  // bumped by every release (waiters compare)
  std::uint64_t last_fence = g_fence.load(std::memory_order_acquire);  // the last token handed out
  int waiters = 0;
  std::condition_variable_any cv;  // waits on the shard's SpinLock (a Guard of it)
  WakeList wakes;  // of waiters that hold no thread (LockWaiter::wake_on_change)
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
  // reentrant: the key is free, so the first starving waiter's turn has
  // begun; its place ends `turn` from now at the latest (acquire.lua,
  // release.lua: begin_turn).
  void begin_turn(Clock::time_point now, std::chrono::milliseconds turn) {
    if (!line.empty()) line.front().second = std::min(line.front().second, now + turn);
  }
  // Drops readers and places in line that ran out.
  void prune(Clock::time_point now) {
    std::erase_if(line, [&](const auto& e) { return e.second <= now; });
    std::erase_if(readers, [&](const auto& r) { return r.second.expires <= now; });
    std::erase_if(writers_waiting, [&](const auto& w) { return w.second <= now; });
  }
  // The next fencing token: above the last one, and at least the clock's
  // nanoseconds (a token never runs ahead of the clock by more than the
  // tokens handed out within one nanosecond, so a later call on another
  // table or a new slot, reading the clock later, gets a higher one).
  std::uint64_t next_fence(Clock::time_point now) {
    const auto t = static_cast<std::uint64_t>(now.time_since_epoch().count());
    last_fence = std::max(last_fence + 1, t);
    return last_fence;
  }
  ~Slot() {  // a new slot of the key starts above this one's tokens
    std::uint64_t seen = g_fence.load(std::memory_order_relaxed);
    while (seen < last_fence && !g_fence.compare_exchange_weak(seen, last_fence, std::memory_order_release)) {
    }
  }
  void take(std::string_view o, Clock::time_point now, std::chrono::milliseconds lease) {
    held = true;
    owner.assign(o);
    fence = next_fence(now);
    expires = now + lease;
  }
  void wake() {
    ++releases;
    if (waiters > 0) cv.notify_all();  // (waiters register under the shard's mutex)
    wakes.fire();
  }
};

// One part of the table with its own mutex: calls on keys of different
// shards never wait for each other.
struct alignas(64) Shard {
  SpinLock mutex;
  KeyMap<std::unique_ptr<Slot>> slots WEAVE_GUARDED_BY(mutex);
  unsigned ops WEAVE_GUARDED_BY(mutex) = 0;
  // Slots dropped so far: a MemSlotHint taken at the same count still
  // points at its key's slot.
  std::uint64_t drops WEAVE_GUARDED_BY(mutex) = 0;

  Slot& slot(const HashedKey& key) WEAVE_REQUIRES(mutex) {
    if (Slot* s = find_recent(key)) return *s;
    auto it = slots.find(key);
    if (it == slots.end()) it = slots.emplace(std::string(key.key), std::make_unique<Slot>()).first;
    remember(key, *it);
    return *it->second;
  }
  Slot* find(const HashedKey& key) WEAVE_REQUIRES(mutex) {
    if (Slot* s = find_recent(key)) return s;
    auto it = slots.find(key);
    if (it == slots.end()) return nullptr;
    remember(key, *it);
    return it->second.get();
  }
  // The last key found: a hot key skips the map's bucket lookup (a division
  // by a prime, a tenth of a mem:// acquisition). An element's address stays
  // valid across rehashes; each erase bumps `drops`, which forgets it.
  Slot* find_recent(const HashedKey& key) WEAVE_REQUIRES(mutex) {
    return recent_ && recent_drops_ == drops && recent_hash_ == key.hash && recent_->first == key.key
               ? recent_->second.get()
               : nullptr;
  }
  void remember(const HashedKey& key, const KeyMap<std::unique_ptr<Slot>>::value_type& entry) WEAVE_REQUIRES(mutex) {
    recent_ = &entry;
    recent_hash_ = key.hash;
    recent_drops_ = drops;
  }
  const KeyMap<std::unique_ptr<Slot>>::value_type* recent_ WEAVE_GUARDED_BY(mutex) = nullptr;
  std::size_t recent_hash_ WEAVE_GUARDED_BY(mutex) = 0;
  std::uint64_t recent_drops_ WEAVE_GUARDED_BY(mutex) = 0;
  MemSlotHint hint(Slot& s) WEAVE_REQUIRES(mutex) { return {this, &s, drops}; }
  // An idle slot is kept for the next call on its key (a hot key costs no
  // allocation) while the shard is small; past that it is dropped at once.
  void drop_if_idle(std::string_view key, Slot& s, Clock::time_point now) WEAVE_REQUIRES(mutex) {
    if (slots.size() > kKeptIdle && s.idle(now)) {
      slots.erase(slots.find(HashedKey(key)));
      ++drops;
    }
  }
  // Drops leases that ran out and nobody touched (e.g. release=on_expiry),
  // and idle slots, so the table does not grow without bound. Amortised.
  void maybe_sweep(Clock::time_point now) WEAVE_REQUIRES(mutex) {
    if (++ops < 4096) [[likely]]
      return;
    ops = 0;
    sweep(now);
  }
  [[gnu::noinline]] void sweep(Clock::time_point now) WEAVE_REQUIRES(mutex) {
    for (auto it = slots.begin(); it != slots.end();) {
      Slot& s = *it->second;
      s.prune(now);
      if (s.idle(now)) {
        it = slots.erase(it);
        ++drops;
      } else
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
  // The caller's clock reading (request.now) may be a little older than the
  // shard's last call: a lease then looks held a little longer (never
  // shorter), and a new lease ends at now + lease, no later than the holder's
  // own estimate (read before).
  AcquireResult acquire(const AcquireRequest& request) override { return acquire(request, nullptr); }
  AcquireResult acquire(const AcquireRequest& request, MemSlotHint* hint) {
    const Clock::time_point now = request.now != Clock::time_point{} ? request.now : Clock::now();
    if (request.type == LockType::reentrant)
      return acquire_exclusive(request.key, request.owner_token, request.lease, now, request.handoff_turn,
                               request.starving, hint);
    return acquire_typed(request.type, request.key, request.owner_token, request.lease, request.queue_entry, now,
                         hint);
  }

  ReleaseResult release(const ReleaseRequest& request) override { return release(request, MemSlotHint{}); }
  ReleaseResult release(const ReleaseRequest& request, const MemSlotHint& hint) {
    const Clock::time_point now = request.now != Clock::time_point{} ? request.now : Clock::now();
    if (request.type == LockType::read) return release_reader(request.key, request.owner_token, now);
    return release_exclusive(request.key, request.owner_token, now,
                             request.type == LockType::reentrant ? request.handoff_turn : std::chrono::milliseconds(0),
                             hint);
  }

  bool supports(LockType) const override { return true; }

  void leave_queue(const ReleaseRequest& request) override {
    const LockType type = request.type;
    const std::string_view owner = request.owner_token;
    const HashedKey hk(request.key);
    Shard& sh = shard(hk);
    Guard g(sh.mutex);
    Slot* found = sh.find(hk);
    if (!found) return;
    Slot& s = *found;
    bool left = false;
    if (type == LockType::fair || type == LockType::reentrant) {
      left = std::erase_if(s.line, [&](auto& e) { return e.first == owner; }) > 0;
    } else if (type == LockType::write) {
      left = s.writers_waiting.erase(std::string(owner)) > 0;
    }
    if (left) s.wake();  // the next in line (or held-back readers) may go now
    sh.drop_if_idle(hk.key, s, Clock::now());
  }

 private:
  // reentrant: barging while the line of starving waiters is empty; then
  // only its first may take the key (LockBackend::acquire, acquire.lua).
  AcquireResult acquire_exclusive(std::string_view key, std::string_view owner, std::chrono::milliseconds lease,
                                  Clock::time_point now, std::chrono::milliseconds turn, bool starving,
                                  MemSlotHint* hint) {
    const HashedKey hk(key);
    Shard& sh = shard(hk);
    Guard g(sh.mutex);
    sh.maybe_sweep(now);
    Slot& s = sh.slot(hk);
    if (hint) *hint = sh.hint(s);
    if (s.held_by(owner, now)) {
      s.expires = now + lease;
      return {true, s.fence, {}};
    }
    const bool handoff = turn > std::chrono::milliseconds(0);
    const bool free = !s.held_by_other(owner, now);
    if (handoff && !s.line.empty()) s.prune(now);
    if (!handoff || s.line.empty()) {  // nobody starves
      if (free) {
        s.take(owner, now, lease);
        return {true, s.fence, {}};
      }
      if (!handoff || !starving) return {false, 0, until(s.expires, now)};
    }
    auto mine = std::find_if(s.line.begin(), s.line.end(), [&](auto& e) { return e.first == owner; });
    if (free && (s.line.empty() || mine == s.line.begin())) {
      if (mine != s.line.end()) s.line.erase(mine);
      s.take(owner, now, lease);
      return {true, s.fence, {}};
    }
    if (free) s.begin_turn(now, turn);
    // Refused: until the holder's lease, or the first waiter's turn, runs out.
    const Clock::time_point busy_until = free ? s.line.front().second : s.expires;
    if (starving) {
      const Clock::time_point place = std::max(busy_until, now) + turn;
      if (mine != s.line.end())
        mine->second = place;
      else
        s.line.emplace_back(std::string(owner), place);
    }
    return {false, 0, until(busy_until, now)};
  }

  AcquireResult acquire_typed(LockType type, std::string_view key, std::string_view owner,
                              std::chrono::milliseconds lease, std::chrono::milliseconds entry, Clock::time_point now,
                              MemSlotHint* hint) {
    const HashedKey hk(key);
    Shard& sh = shard(hk);
    Guard g(sh.mutex);
    sh.maybe_sweep(now);
    Slot& s = sh.slot(hk);
    if (hint) *hint = sh.hint(s);
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
        Reader r{now + lease, s.next_fence(now)};
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
    return {false, 0, {}};  // reentrant goes through acquire_exclusive
  }

  ReleaseResult release_reader(std::string_view key, std::string_view owner, Clock::time_point now) {
    const HashedKey hk(key);
    Shard& sh = shard(hk);
    Guard g(sh.mutex);
    Slot* found = sh.find(hk);
    if (!found) return ReleaseResult::lost;
    Slot& s = *found;
    auto r = s.readers.find(std::string(owner));
    if (r == s.readers.end()) return ReleaseResult::lost;
    const bool in_time = r->second.expires > now;
    s.readers.erase(r);
    s.prune(now);
    if (s.readers.empty()) s.wake();  // a writer may go now
    sh.drop_if_idle(key, s, now);
    return in_time ? ReleaseResult::released : ReleaseResult::lost;
  }

  // `turn` > 0: the first starving waiter has that long to take the key.
  // A `hint` (its shard set) spares the lookup while it is current.
  ReleaseResult release_exclusive(std::string_view key, std::string_view owner, Clock::time_point now,
                                  std::chrono::milliseconds turn, const MemSlotHint& hint) {
    const bool hinted = hint.shard != nullptr;
    std::optional<HashedKey> hk;
    if (!hinted) hk.emplace(key);
    Shard& sh = hinted ? *static_cast<Shard*>(hint.shard) : shard(*hk);
    Guard g(sh.mutex);
    Slot* found = hinted && sh.drops == hint.drops ? static_cast<Slot*>(hint.slot)
                                                   : sh.find(hk ? *hk : hk.emplace(key));  // (hashed once)
    if (!found) return ReleaseResult::lost;
    Slot& s = *found;
    if (!s.held || s.owner != owner)
      return !owner.empty() && s.released_by == owner ? ReleaseResult::released : ReleaseResult::lost;
    const bool in_time = s.expires > now;
    s.held = false;
    if (in_time) s.released_by.assign(s.owner.view());
    s.owner.clear();
    if (turn > std::chrono::milliseconds(0) && !s.line.empty()) {
      s.prune(now);
      s.begin_turn(now, turn);
    }
    s.wake();
    sh.drop_if_idle(key, s, now);
    return in_time ? ReleaseResult::released : ReleaseResult::lost;
  }


 public:
  std::vector<RenewResult> renew_batch(std::span<const RenewItem> items) override {
    std::vector<RenewResult> out;
    out.reserve(items.size());
    const auto now = Clock::now();
    for (const RenewItem& item : items) {
      const HashedKey hk(item.key);
      Shard& sh = shard(hk);
      Guard g(sh.mutex);
      Slot* s = sh.find(hk);
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

  std::vector<LockState> list(std::string_view pattern) override {
    const std::string glob(pattern);
    const auto now = Clock::now();
    std::vector<LockState> out;
    for (Shard& sh : shards_) {
      Guard g(sh.mutex);
      for (auto& [key, slot] : sh.slots) {
        Slot& s = *slot;
        s.prune(now);
        if (s.idle(now) && s.waiters == 0) continue;
        if (::fnmatch(glob.c_str(), key.c_str(), 0) != 0) continue;
        out.push_back(state_of(key, s, now));
      }
    }
    std::sort(out.begin(), out.end(), [](const LockState& a, const LockState& b) { return a.key < b.key; });
    return out;
  }

  ForcedRelease force_release(std::string_view key) override {
    const HashedKey hk(key);
    Shard& sh = shard(hk);
    Guard g(sh.mutex);
    const auto now = Clock::now();
    Slot& s = sh.slot(hk);
    s.prune(now);
    ForcedRelease out;
    out.freed = state_of(std::string(key), s, now).holders;
    s.held = false;
    s.owner.clear();
    s.readers.clear();
    out.fence = s.next_fence(now);  // above every token handed out: the old holders' writes are fenced off
    s.wake();
    sh.drop_if_idle(key, s, now);
    return out;
  }

 private:
  class Waiter;

  static LockState state_of(const std::string& key, const Slot& s, Clock::time_point now) {
    LockState st;
    st.key = key;
    st.fence = s.last_fence;
    if (s.held && s.expires > now) {
      st.holders.push_back({std::string(s.owner.view()), s.fence, until(s.expires, now)});
    } else if (!s.readers.empty()) {
      st.read = true;
      for (const auto& [owner, r] : s.readers) st.holders.push_back({owner, r.fence, until(r.expires, now)});
      std::sort(st.holders.begin(), st.holders.end(),
                [](const LockHolder& a, const LockHolder& b) { return a.fencing_token < b.fencing_token; });
    }
    for (const auto& [owner, until_at] : s.line) st.line.push_back(owner);
    std::vector<std::pair<Clock::time_point, std::string>> writers;
    for (const auto& [owner, until_at] : s.writers_waiting) writers.emplace_back(until_at, owner);
    std::sort(writers.begin(), writers.end());
    for (auto& [until_at, owner] : writers) st.line.push_back(std::move(owner));
    return st;
  }

  Shard& shard(const HashedKey& key) { return shards_[key.hash % shards_.size()]; }

  std::array<Shard, 64> shards_;
};

class MemBackend::Waiter final : public LockWaiter {
 public:
  Waiter(std::shared_ptr<MemBackend> b, Shard& shard, std::string key, Slot* s, std::uint64_t seen)
      : backend_(std::move(b)), shard_(shard), key_(std::move(key)), slot_(s), seen_(seen) {}

  bool wait_until(Clock::time_point deadline) override {
    Guard lk(shard_.mutex);
    auto released = [&] { return slot_->releases != seen_; };
    if (deadline == Clock::time_point::max()) {
      slot_->cv.wait(lk, released);
      return true;
    }
    return slot_->cv.wait_until(lk, deadline, released);
  }

  bool wake_on_change(std::function<void()> wake) override {
    bool armed;
    {
      Guard g(shard_.mutex);
      armed = slot_->wakes.arm(this, wake, /*changed=*/slot_->releases != seen_);
    }
    if (!armed) wake();  // released already
    return true;
  }

  ~Waiter() override {
    Guard g(shard_.mutex);
    slot_->wakes.drop(this);
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
  const HashedKey hk(key);
  Shard& sh = shard(hk);
  Guard g(sh.mutex);
  Slot& s = sh.slot(hk);
  ++s.waiters;
  return std::make_unique<Waiter>(shared_from_this(), sh, std::string(key), &s, s.releases);
}

}  // namespace

std::shared_ptr<LockBackend> make_mem_backend() { return std::make_shared<MemBackend>(); }

bool is_mem_backend(const LockBackend* backend) noexcept { return dynamic_cast<const MemBackend*>(backend) != nullptr; }

// Flattened: the table's steps (lookup, take, release, wake) inline into one
// function each, as the lease's release driver (lease.cpp) is.
[[gnu::flatten]] AcquireResult mem_acquire(LockBackend& backend, const AcquireRequest& request, MemSlotHint& hint) {
  return static_cast<MemBackend&>(backend).acquire(request, &hint);
}

[[gnu::flatten]] ReleaseResult mem_release(LockBackend& backend, const ReleaseRequest& request,
                                           const MemSlotHint& hint) {
  return static_cast<MemBackend&>(backend).release(request, hint);
}

}  // namespace weave::detail
