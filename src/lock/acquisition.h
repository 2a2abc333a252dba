// A lock request as steps, so that the blocking path (LockClient, which
// waits on condition variables) and the suspending one (asynchronous methods,
// src/lock/asio/) drive one set of rules: validation, reentrancy, counting,
// all-or-nothing multi-key leases, the wake-up times of a waiter, places in
// line, starvation turns. Only the waiting differs between the two.
//
//   Acquisition a(shared, keys, spec, spec_checked, waited, busy_key, series, lend_client);
//   if (LeaseHandle h = a.begin(context_head())) return h;
//   if (a.single_try()) {       // one key, not waiting: one attempt
//     AcquireResult r = a.try_single(hint);
//     if (!r.acquired) return a.busy(0);
//     a.took(0, r, a.started(), hint);
//     return a.finish();
//   }
//   for (std::size_t i = 0; i < a.missing().size(); ++i) {
//     KeyAttempt k = a.attempt(i);
//     ... loop: k.try_once(); wait for the waiter until k's wake time; k.after_release() ...
//     if (!acquired) return a.busy(i);   // gives the keys taken back
//     a.took(i, result, k);
//   }
//   if (!a.stale().empty()) {   // waiting for a later key cost the earlier ones part of their lease
//     if (!a.refreshed(backend.renew_batch(a.stale()))) { a.start_over(); ... the loop again, or a.lost_busy() }
//   }
//   return a.finish();
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/key_hash.h"
#include "core/unique_token.h"
#include "internal.h"
#include "mem_backend.h"

namespace WEAVE_NAMESPACE::detail {

// This process's gate of one (backend, key): where its exclusive waiters
// take turns through one local leader, kept while any of them is there. The
// blocking waiters' gate (LocalGate, acquisition.cpp) and the suspending
// ones' (AsyncGate, asio/async_lock.cpp) are each a Gate type of their own,
// each in a table of its own.
template <class Gate>
class GateRef {
 public:
  GateRef(const LockBackend* backend, std::string_view key) {
    id_.reserve(key.size() + 20);
    id_ = std::to_string(reinterpret_cast<std::uintptr_t>(backend));
    id_ += '/';
    id_ += key;
    Table& t = table();
    Guard g(t.mutex);
    Entry& e = t.gates[id_];
    if (!e.gate) e.gate = std::make_shared<Gate>();
    gate_ = e.gate;
    ++e.users;
  }
  ~GateRef() {
    Table& t = table();
    Guard g(t.mutex);
    auto it = t.gates.find(id_);
    if (--it->second.users == 0) t.gates.erase(it);
  }
  GateRef(const GateRef&) = delete;
  GateRef& operator=(const GateRef&) = delete;
  Gate* operator->() const noexcept { return gate_.get(); }

 private:
  struct Entry {
    std::shared_ptr<Gate> gate;
    int users = 0;
  };
  struct Table {
    Mutex mutex;
    KeyMap<Entry> gates WEAVE_GUARDED_BY(mutex);
  };
  static Table& table() { return fork_guarded<Table>(); }
  std::string id_;
  std::shared_ptr<Gate> gate_;
};

// The hand-off turn a request of `type` carries (reentrant only).
std::chrono::milliseconds handoff_turn(const ClientShared& shared, LockType type) noexcept;

// One key of a request, until acquired or its deadline.
class KeyAttempt {
 public:
  KeyAttempt(const ClientShared& shared, std::string_view key, std::string_view owner, LockType type,
             std::chrono::milliseconds lease_time, bool waits, Clock::time_point deadline,
             Clock::time_point call_start, Clock::time_point first_attempt);
  // Leaves the backend's line unless acquired (a store call: an asynchronous
  // driver calls leave_line() itself, off its executor, first).
  ~KeyAttempt() { leave_line(); }
  KeyAttempt(const KeyAttempt&) = delete;
  KeyAttempt& operator=(const KeyAttempt&) = delete;

  std::string_view key() const noexcept { return key_; }
  LockBackend& backend() const noexcept { return backend_; }
  Clock::time_point deadline() const noexcept { return deadline_; }
  // Exclusive waiters of a process take turns through one local leader per key.
  bool gated() const noexcept { return waits_ && (type_ == LockType::reentrant || type_ == LockType::write); }

  // Prepares the wait (when waiting: before trying, so a release in between
  // is not missed) and tries once. Store round trips.
  struct Tried {
    std::optional<AcquireResult> acquired;  // set: done
    bool give_up = false;                   // not waiting, or the deadline passed
    bool again = false;                     // refused before a wait was prepared: try again now
    Clock::time_point wake{};               // else: wait for a release until then, then try again
  };
  Tried try_once();
  // try_once() in steps, for a driver that sends the request itself:
  // `prepare_wait` false tries first without preparing a wait (a store call
  // of its own), and a refusal then says `again`.
  AcquireRequest request(bool prepare_wait);
  Tried tried(const AcquireResult& r);
  // The waiter try_once() prepared (null when not waiting).
  LockWaiter* waiter() const noexcept { return waiter_.get(); }
  // After the waiter said the key was released: nullopt to try again now, or
  // the time to keep waiting until (the release designated another starving
  // waiter, whose turn it is). `last_wake`: try_once()'s wake.
  std::optional<Clock::time_point> after_release(Clock::time_point last_wake) const;
  // When the winning attempt was sent.
  Clock::time_point sent() const noexcept { return sent_; }
  // mem://: where the key's slot is (the lease's release goes straight to it).
  const MemSlotHint& slot_hint() const noexcept { return slot_hint_; }
  // Gives up a place in the backend's line, if it holds one.
  void leave_line() noexcept;
  bool holds_place() const noexcept { return in_line_; }

 private:
  const ClientShared& shared_;
  LockBackend& backend_;
  std::string_view key_, owner_;
  LockType type_;
  std::chrono::milliseconds lease_time_;
  bool waits_;
  Clock::time_point deadline_, call_start_, first_attempt_;
  std::chrono::milliseconds queue_entry_{0};  // fair / write waiters hold a place in line
  std::chrono::milliseconds turn_{0};         // reentrant hand-off turn (starvation)
  bool may_starve_ = false;
  bool starving_ = false;       // the last request's
  bool wait_prepared_ = false;  // the last request's
  bool in_line_ = false;
  std::unique_ptr<LockWaiter> waiter_;
  Clock::time_point sent_{};
  MemSlotHint slot_hint_;
};

// One request: counted once however it ends (LockStats, its series).
class Acquisition {
 public:
  // Counts the request from now; begin() checks it (its keys only when
  // `spec_checked`: spec_is_valid(spec) said so already). `lend_client`:
  // the lease borrows the client's group (the caller keeps the client alive
  // until it gives up its hold).
  Acquisition(const std::shared_ptr<const ClientShared>& shared, std::span<const std::string_view> keys,
              const LockSpec& spec, bool spec_checked, std::chrono::milliseconds* waited, std::string* busy_key,
              LockSeries& series, bool lend_client);
  ~Acquisition();
  Acquisition(const Acquisition&) = delete;
  Acquisition& operator=(const Acquisition&) = delete;

  // Checks the request (UsageError), then: a hold on a lease the running
  // call's context (its head: `context`) holds already (reentrancy), or an
  // empty handle: take missing() then.
  LeaseHandle begin(const std::shared_ptr<const ContextLink>& context);
  std::span<const std::string_view> missing() const noexcept { return missing_; }
  KeyAttempt attempt(std::size_t i);
  // A request for one key that does not wait: its one attempt, sent by
  // try_single() (no KeyAttempt: no waiter, no gate, no place in line),
  // taken at started().
  bool single_try() const noexcept { return missing_.size() == 1 && !waits_; }
  AcquireResult try_single(MemSlotHint& hint);
  Clock::time_point started() const noexcept { return start_; }
  // Key i was taken by `k`'s last attempt (or by an attempt sent at `sent`,
  // its slot at `hint`).
  void took(std::size_t i, const AcquireResult& r, const KeyAttempt& k) { took(i, r, k.sent(), k.slot_hint()); }
  void took(std::size_t i, const AcquireResult& r, Clock::time_point sent, const MemSlotHint& hint);
  // Key i stays busy: the keys before it are given back (store calls), busy_key
  // and waited are set; returns the empty handle the request ends with.
  LeaseHandle busy(std::size_t i);
  // Key i failed with an exception: names it in `e` if a weave::Error, gives
  // the keys before it back (store calls). The caller rethrows.
  void failed(std::size_t i) noexcept;
  // After the last key was taken: the keys taken before it whose lease
  // began long enough before the last one's (a wait for a busy key may
  // outlast a whole lease) to be renewed before the body starts, so that
  // every key holds its full lease counted from the last key's taking.
  // Empty when none needs it (taken within stale_after of each other).
  std::span<const RenewItem> stale();
  // The renewal's results, in stale()'s order: true when every key is still
  // this request's (the lease counts from the last key now). False: a key
  // ran out and may have been taken meanwhile; start_over().
  bool refreshed(std::span<const RenewResult> results);
  // Gives every key back (store calls) and forgets them: true when the
  // deadline leaves time to take them again from the first, else the
  // request ends busy, naming the key that ran out (lost_busy()).
  bool start_over();
  LeaseHandle lost_busy();
  LeaseHandle finish();
  // Keys taken this close together need no renewal before the body starts.
  static constexpr std::chrono::milliseconds stale_after{1};

 private:
  const std::shared_ptr<const ClientShared>& shared_;  // the client's (outlives the request)
  const LockSpec& spec_;
  bool spec_checked_;
  bool lend_client_;  // the lease borrows the client's group (LeaseControl::try_acquire)
  std::chrono::milliseconds* waited_;
  std::string* busy_key_;
  LockSeries& series_;
  Clock::time_point start_;
  std::atomic<std::uint64_t> LockCounts::*outcome_ = &LockCounts::errors;
  Clock::time_point end_{};  // when the request ended, if the clock was read already
  std::vector<std::string_view> sorted_, not_held_;
  std::span<const std::string_view> keys_, missing_;
  std::chrono::milliseconds lease_time_{0};
  bool waits_ = false;
  Clock::time_point deadline_{};
  TokenText owner_;  // one owner for every key of the lease
  std::uint64_t first_fence_ = 0;
  MemSlotHint first_slot_;
  std::vector<std::pair<std::string, std::uint64_t>> more_;  // the further keys of a multi-key lease
  Clock::time_point first_sent_{}, last_sent_{}, expires_ = Clock::time_point::max();
  Clock::time_point last_expires_ = Clock::time_point::max();  // the last key's validity, if shorter
  std::vector<RenewItem> stale_;
  std::string lost_key_;  // the key a refresh found run out
  void give_back_before(std::size_t i) noexcept;
  // The request ends busy, naming `key` (the keys are given back already).
  LeaseHandle ends_busy(std::string_view key);
};

}  // namespace weave::detail
