// Where one delay queue keeps its messages: mem:// in this process
// (queue_mem.cpp), the Redis URLs through the store layer (redis/,
// scripts/). Both keep the same states and rules; docs/queue.md has them:
//
//   offer ──> scheduled (delayed until due, then ready) ──take──> in flight
//   in flight ──ack──> gone            ──retry(d)──> scheduled (due in d)
//   in flight ──fail / lease ran out──> scheduled after backoff, or dead
//   dead ──requeue──> scheduled (due now)      cancel: gone from any state
//
// Due times and lease deadlines are the store's clock (Redis TIME), in ms.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weave/abi.h"

namespace WEAVE_NAMESPACE::detail {

// The last error of a delivery the queue took back because its lease ran out
// (scripts/_queue.lua's reclaim() writes the same words).
inline constexpr std::string_view kStalled =
    "its delivery lease ran out before it was settled (the worker died, was stopped or hung)";

struct QueueOffer {
  std::string_view id, payload;
  std::chrono::milliseconds delay{0};
  int retries = 0;
  std::chrono::milliseconds backoff{0}, backoff_cap{0};
  // A tick of schedule `schedule` (not empty): due at `tick_ms` on the
  // store's clock (`delay` unused), and added only if the schedule has
  // offered no tick at or after it, so every worker may offer the tick it
  // sees due and the queue holds it once, ever.
  std::string_view schedule;
  std::int64_t tick_ms = 0;
  // With `schedule`: ticks the schedule missed before this one, added to
  // its count only with the tick (so counted once, whoever offers it).
  std::uint64_t missed = 0;
  // With `schedule`: the record of its last run (JSON text), kept whether
  // the tick is added or not; empty leaves the one there.
  std::string_view last_run;
  // With `schedule`: added only if the schedule's last tick offered is
  // still this one (-1: none yet), so of two workers planning from the same
  // last tick at different times, one adds its tick.
  std::optional<std::int64_t> if_last_tick;
};

struct QueueOffered {
  // false: a message with this id is queued already (left as it was), or,
  // for a tick, its schedule offered this tick or a later one already.
  bool added = false;
};

// A schedule's last tick offered (-1: none yet), the store's clock, the
// ticks it missed, its last run's record ("" none: QueueOffer's), and the
// queue's messages scheduled or in flight, all read in one step.
struct QueueTicks {
  std::int64_t last_tick_ms = -1;
  std::int64_t now_ms = 0;
  std::uint64_t missed = 0;
  std::string last_run;
  std::uint64_t live = 0;
  bool paused = false;  // pause_schedule(): no tick of it is added, a tick taken is not run
};

// A delivered message, now in flight under a lease of the given length.
struct QueueMessage {
  std::string id, payload;
  std::uint64_t token = 0;  // fencing: grows with every delivery of the queue
  std::int64_t due_ms = 0, now_ms = 0;
  int deliveries = 0, failures = 0, retries = 0;
  std::string last_error;  // of the last failed attempt ("" if none)
};

struct QueueTaken {
  std::vector<QueueMessage> messages;  // due order; empty: nothing was due
  std::int64_t now_ms = 0;
  // Fewer than asked: when to look again (the first due time or delivery
  // lease deadline, store clock ms), or -1 when the queue is empty.
  std::int64_t next_ms = -1;
  // Ids the reclaim before the take dead-lettered: deliveries whose lease
  // ran out on their last attempt (the worker died, was stopped or hung).
  std::vector<std::string> dead_lettered;
};

enum class SettleAction { ack, retry, fail, dead };
// gone: cancelled while in flight. absent: no such message, which an ack
// sent again after its answer was lost finds (a store that may send a
// request twice tells it from a cancel; mem:// answers gone). failed: only
// in AckedAndTaken, when the store answered that ack with an error (its text
// in `errors`); the message stays in flight until its lease runs out and is
// taken back.
enum class Settled { done, dead, taken_back, gone, absent, failed };
enum class EditAction { cancel, reschedule, requeue };
enum class Edited { done, wrong_state, absent };

struct QueueCounts {
  std::uint64_t delayed = 0, ready = 0, in_flight = 0, dead = 0;
  std::vector<std::string> dead_lettered;  // ids the reclaim before counting dead-lettered
};

struct QueueMessageState {
  char state = 0;  // 0 absent, 'z' scheduled, 'a' in flight, 'd' dead
  std::int64_t due_ms = 0, now_ms = 0;
  int deliveries = 0, failures = 0;
  std::string last_error;
};

// A message as an operator lists it (QueueStore::list).
struct QueueListed {
  std::string id, payload, last_error;
  std::int64_t due_ms = 0;  // scheduled: its due time (store clock ms)
  int deliveries = 0, failures = 0;
};

class QueueWaiter {
 public:
  virtual ~QueueWaiter() = default;
  // True once the queue's first due time may have moved since this waiter
  // was made or last returned true (may be spurious); false at the deadline.
  virtual bool wait_until(std::chrono::steady_clock::time_point deadline) = 0;
};

// One queue. All may throw IoError / ReplyError.
class QueueStore {
 public:
  virtual ~QueueStore() = default;
  virtual QueueOffered offer(const QueueOffer& offer) = 0;
  // True for a store in this process (mem://), which shares its clock.
  virtual bool in_process() const noexcept { return false; }
  // offer() of each, in order; a store may send them together. After an
  // error some may be queued (each id is still one message).
  virtual std::vector<QueueOffered> offer_many(std::span<const QueueOffer> offers) {
    std::vector<QueueOffered> out;
    out.reserve(offers.size());
    for (const QueueOffer& o : offers) out.push_back(offer(o));
    return out;
  }
  // offer(), told to `done` (the answer, or the error) when stored: offers
  // made this way reach the store in the order they were made. `done` runs
  // on another thread (the store's sender), or here when the store has none
  // (mem://); it must not throw. `offer`'s views are copied before this returns.
  virtual void offer_async(const QueueOffer& offer, std::function<void(QueueOffered, std::exception_ptr)> done) {
    QueueOffered answer;
    std::exception_ptr error;
    try {
      answer = this->offer(offer);
    } catch (...) {
      error = std::current_exception();
    }
    done(answer, error);
  }
  // Takes back expired deliveries (each a failed attempt), then delivers up
  // to `max` (>= 1) of the first due messages (same due time: offer order),
  // each under `lease`. `jitter` in [0, 1) spreads the backoff of what it
  // takes back.
  virtual QueueTaken take(std::chrono::milliseconds lease, double jitter, std::size_t max) = 0;
  // For the holder of `token` only. `delay` for retry; `reason` for fail and dead.
  virtual Settled settle(std::string_view id, std::uint64_t token, SettleAction action,
                         std::chrono::milliseconds delay, std::string_view reason, double jitter) = 0;
  // An ack of each delivery, then take(), in one step (one round trip): a
  // worker's usual step. The take happens whatever the acks' answers (an
  // ack's error is its answer, never thrown: the messages taken would be
  // lost to this worker with it); with `max` 0 there is none.
  struct Held {
    std::string_view id;
    std::uint64_t token;
  };
  struct AckedAndTaken {
    std::vector<Settled> acked;  // one per delivery, in order
    std::vector<std::string> errors;  // one per delivery: a failed ack's error, else ""
    QueueTaken taken;
  };
  virtual AckedAndTaken ack_and_take(std::span<const Held> done, std::chrono::milliseconds lease, double jitter,
                                     std::size_t max) = 0;
  // One answer per delivery: still held by its token (then extended by `lease`).
  virtual std::vector<bool> renew(std::span<const Held> items, std::chrono::milliseconds lease) = 0;
  virtual Edited edit(std::string_view id, EditAction action, std::chrono::milliseconds delay) = 0;
  virtual QueueCounts counts(double jitter) = 0;
  virtual QueueMessageState inspect(std::string_view id) = 0;
  virtual QueueTicks ticks(std::string_view schedule) = 0;
  // Pauses the schedule (its tick offers are refused), or resumes it: then
  // its last tick offered becomes the store's now (if earlier), so the next
  // tick planned is the first after the resume, and none is counted missed
  // for the pause.
  virtual void pause_schedule(std::string_view schedule, bool paused) = 0;
  // The names of this store's queues (every queue of its URL, or of its
  // mem:// table) that hold a schedule's ticks, in no order.
  virtual std::vector<std::string> ticking_queues() = 0;
  // Deletes every dead message; returns how many.
  virtual std::uint64_t purge_dead() = 0;
  // The first `limit` scheduled messages by due time (state 'z'), or the
  // last `limit` dead ones, newest first ('d'). Read-only.
  virtual std::vector<QueueListed> list(char state, std::size_t limit) = 0;
  // Made BEFORE the take() it follows, so an offer in between is not missed.
  virtual std::unique_ptr<QueueWaiter> prepare_wait() = 0;
  // Wakes every waiter of the queue (spuriously: they look again).
  virtual void wake() = 0;
};

// mem://<table>: queue `name` of that table, shared by the process.
std::shared_ptr<QueueStore> make_mem_queue(std::string_view table, std::string_view name);

}  // namespace weave::detail
