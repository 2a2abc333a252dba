// weave/semaphore.h — at most `permits` holders of a key at once, across
// every process that shares the quota store (weave/quota.h).
//
//   weave::Semaphore exports;                                    // the process-wide quota store
//   weave::Permit p = exports.acquire("export:" + tenant, {.permits = 4, .wait = 30s});
//   for (const Part& part : parts) {
//     if (p->stop_token().stop_requested()) throw Abandoned(p->lost_cause());  // lost: a fifth may run
//     write(part, p->fencing_token());
//   }
//   // p gives the permit back when it goes (or at p.release())
//
// A permit is a lease, as a lock's is (weave/held_lease.h): the store keeps
// it for QuotaOptions::permit_lease and the renewer extends it every third of
// that while it is held. A holder that dies (SIGKILL) or stops (SIGSTOP) is
// renewed no more: its permit comes back once its lease runs out, and a
// stopped holder that resumes finds it lost. The store drops a holder only
// after the holder's own deadline passed, so never more than `permits` live
// permits exist. Each grant gets a fencing token, increasing per key.
//
// Callers that wait are served in arrival order (FIFO): a freed permit goes
// to the longest waiting caller, woken by the release itself (on Redis a
// waiting thread blocks on its own inbox, a coroutine hears the key's
// channel), not by polling. A waiter keeps its place by asking again within
// QuotaOptions::line_place; one that dies holds the line up for that long at
// most. A caller that does not wait takes a permit only when nobody waits.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "weave/abi.h"
#include "weave/held_lease.h"
#include "weave/quota.h"

namespace WEAVE_NAMESPACE {

namespace detail {
class HeldPermit;
class QuotaRuntime;
}  // namespace detail

struct SemaphoreSpec {
  std::uint32_t permits = 0;          // held at once at most, 1 to 1,000,000
  std::chrono::milliseconds wait{0};  // for a permit to come free; 0: not at all
};

// A held permit: what every held lease answers, and its fencing token.
// Owned by the Permit that holds it; thread-safe.
class WEAVE_API SemaphorePermit : public HeldLease {
 public:
  // Increasing per key across grants (by the store's clock: a key whose
  // state expired starts above every earlier token).
  std::uint64_t fencing_token() const noexcept;

 private:
  friend class detail::HeldPermit;  // the only implementation
  explicit SemaphorePermit(detail::LeaseCore& core) noexcept : HeldLease(core) {}
  ~SemaphorePermit() = default;
};

// Holds one permit until release() or its destruction; empty when none was
// granted. Move-only. Not thread-safe itself (the permit it points to is).
class WEAVE_API Permit {
 public:
  Permit() noexcept = default;
  Permit(Permit&&) noexcept = default;
  Permit& operator=(Permit&& other) noexcept;
  ~Permit();  // release(), errors counted and reported, never thrown

  explicit operator bool() const noexcept { return held_ != nullptr; }
  const SemaphorePermit* operator->() const noexcept;
  const SemaphorePermit& operator*() const noexcept { return *operator->(); }

  // Gives the permit back now (the Permit is empty after). True when it was
  // still held; false when it had been lost (it ran out while its holder
  // was paused, or the store dropped it). Throws IoError (and its kinds)
  // when the store could not be told: the permit then runs out by itself.
  bool release();

 private:
  friend class detail::HeldPermit;  // hands it out, and reads it
  explicit Permit(std::shared_ptr<detail::HeldPermit> held) noexcept : held_(std::move(held)) {}
  std::shared_ptr<detail::HeldPermit> held_;
};

// Inside a [[semaphore]] method: the permit the running call holds (the
// innermost, or the one of `key`), or null. Valid until the method returns.
WEAVE_API const SemaphorePermit* current_permit() noexcept;
WEAVE_API const SemaphorePermit* current_permit(std::string_view key) noexcept;

// One holder, as the store has it (`weave permits`).
struct PermitHolder {
  std::string owner;
  std::uint64_t fencing_token = 0;
  std::chrono::milliseconds expires_in{0};  // by the store's clock
};
struct SemaphoreState {
  std::string key;
  std::vector<PermitHolder> holders;  // live ones, by fencing token
  std::size_t waiting = 0;            // callers with a live place in line
};

// Thread-safe; copies share their store.
class WEAVE_API Semaphore {
 public:
  // On the process-wide quota store (configure_quota(), else what
  // weave::load_options<QuotaOptions>() loads), taken at each call.
  Semaphore();
  // On a store of its own.
  explicit Semaphore(QuotaOptions options);

  // A permit of `key`, waiting up to spec.wait for one to come free; empty
  // when none came in time (nothing held, no place left in line). Throws
  // UsageError for a bad key or spec, IoError (and its kinds) when the store
  // fails.
  Permit try_acquire(std::string_view key, const SemaphoreSpec& spec);
  // try_acquire(), throwing SemaphoreBusy instead of returning an empty Permit.
  Permit acquire(std::string_view key, const SemaphoreSpec& spec);

  // The keys matching the glob `pattern` that have holders or waiters,
  // sorted by key: for operators (a walk over the whole store: SCAN on Redis).
  std::vector<SemaphoreState> list(std::string_view pattern = "*");

 private:
  std::shared_ptr<detail::QuotaRuntime> own_;  // null: the process-wide one
};

}  // namespace weave
