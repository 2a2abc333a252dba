// Where semaphores keep each key's holders and waiting line. mem:// keeps
// them in this process (semaphore_mem.cpp); the Redis URLs in five keys of
// one slot, each step one script on the server's clock
// (redis/semaphore_redis.cpp, scripts/permit_*.lua), which the mem:// table
// mirrors step for step.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/change_waiter.h"
#include "weave/abi.h"
#include "weave/semaphore.h"

namespace WEAVE_NAMESPACE::detail {

// One caller's request (acquire), or the permit it gives back (release,
// leave_line: `permits` and `place` are then those of the grant the next
// waiter may get, which lasts `place` until that waiter renews it).
struct PermitRequest {
  std::string_view key, owner;  // (views: kept by the caller while sent)
  std::uint32_t permits = 1;    // held at once at most
  std::chrono::milliseconds lease{0};
  // How long a place in line lasts if refused (the caller asks again within
  // it); 0: the caller does not wait, so it takes no place.
  std::chrono::milliseconds place{0};
};

// What a waiting caller waits on between its requests: a change of the
// key's holders or line. A release grants its permit to the first waiter
// in line directly; where the store tells that waiter with the grant's
// fencing token (Redis: the release's message), the waiter takes it
// without another request.
class PermitWaiter : public ChangeWaiter {
 public:
  // The fencing token of a permit granted to this waiter's owner that came
  // with a change since the last call; nullopt otherwise (the next
  // acquire() then returns such a grant).
  virtual std::optional<std::uint64_t> take_grant() { return std::nullopt; }
};

struct PermitGrant {
  bool granted = false;
  std::uint64_t fencing_token = 0;        // granted
  std::chrono::milliseconds retry_in{0};  // refused: when asking again may succeed at the latest
  std::uint32_t reclaimed = 0;            // permits of holders whose lease ran out, taken back by this step
};

class SemaphoreStore {
 public:
  virtual ~SemaphoreStore() = default;
  // All may throw IoError (and its kinds) or ReplyError.

  // Drops the holders whose lease ran out, then grants `owner` a permit
  // when fewer waiters are ahead of it in line than permits are free
  // (FIFO); a holder asking again (a reply lost, or a permit a release
  // granted it) gets its grant again, extended. Refused with a `place`: the
  // caller keeps (or takes) its place in line.
  virtual PermitGrant acquire(const PermitRequest& r) = 0;
  struct Renewal {
    std::string_view key, owner;
    std::chrono::milliseconds lease;
  };
  // Extends each permit still held; one result per item (false: lost).
  virtual std::vector<bool> renew(std::span<const Renewal> items) = 0;
  // Gives `r.owner`'s permit back: with fewer than `r.permits` then held,
  // to the first waiter in line (a grant lasting `r.place`, until that
  // waiter's first renewal), else the line is woken. False when it was no
  // longer held (its lease had run out).
  virtual bool release(const PermitRequest& r) = 0;
  // A waiter that gives up leaves the line (those behind it are woken), or
  // gives back the permit a release granted it meanwhile.
  virtual void leave_line(const PermitRequest& r) = 0;
  // How a caller waits between its requests: blocking its thread
  // (wait_until), or woken by a callback (wake_on_change: asynchronous
  // methods).
  enum class WaitOn { this_thread, callback };
  // `owner`'s waiter, made before the acquire() whose refusal it waits out.
  // A store may mark `owner` first (before any request is sent with it) to
  // say how its waiter is told: on Redis, the owner of a thread waiting on a
  // connection of its own ends in '+' (scripts/_permit.lua, tell()).
  virtual std::unique_ptr<PermitWaiter> prepare_wait(std::string_view key, std::string& owner, WaitOn how) = 0;
  // The keys matching the glob `pattern` with live holders or waiters, in any order.
  virtual std::vector<SemaphoreState> list(std::string_view pattern) = 0;
  virtual bool in_process() const noexcept { return false; }
};

// mem://[table]: the table shared by every quota store of the same URL in
// this process (its clock: steady_clock).
std::shared_ptr<SemaphoreStore> make_mem_semaphores(std::string_view table);

}  // namespace weave::detail
