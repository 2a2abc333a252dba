// weave/error.h — the typed errors every part of Weave throws.
//
// One hierarchy, rooted at weave::Error, so callers can catch broadly or
// precisely. Every error says whether retrying the same call can succeed:
//
//   try { svc.pay("o-1", 100); }
//   catch (const weave::LockBusy& e) { log(e.key(), e.waited()); }     // someone else holds it
//   catch (const weave::Error& e)    { if (e.retryable()) retry(); else throw; }
//
//   Error
//   ├── ConfigError            bad URL, bad JSON, unknown option (fix the config)
//   ├── UsageError             API misuse: missing interceptor, wrong argument kind
//   ├── LockError              a lock failed; carries the lock key
//   │   ├── LockBusy           not acquired within `wait` (retryable)
//   │   ├── LeaseLost          the lease expired or was taken while the method ran
//   │   │   └── HoldLimitExceeded  held past its max_hold: no longer renewed
//   │   └── ReleaseFailed      the work is done but the lock was not given back
//   │                          (opt-in, see ReleaseFailurePolicy; not retryable)
//   ├── DedupeError            refused because of an earlier call with the same key
//   │   │                      (never retryable); carries the key
//   │   ├── DuplicateCall      a duplicate of an earlier call: [[dedupe]], or a
//   │   │   │                  release=on_expiry lock still held
//   │   │   └── DuplicateInFlight  the earlier call still runs (dedupe wait ran out)
//   │   └── DedupeMismatch     the key's earlier call had other arguments (match=)
//   ├── RateLimited            a rate limit refused the call; retry_after()
//   │                          says when it would be admitted (retryable)
//   ├── SemaphoreBusy          no permit of a semaphore came free within the
//   │                          wait (retryable)
//   ├── BulkheadFull           no slot of an in-process bulkhead came free
//   │                          within the wait (retryable)
//   ├── TimeoutExceeded        a call ran past its [[timeout]] deadline
//   │                          (retryable; not the store's TimeoutError)
//   ├── CircuitOpen            a circuit breaker refused the call (not
//   │                          retryable: it fails fast); retry_after()
//   ├── QueueError             a queue refused a request (bad name, id, delay,
//   │   │                      payload); carries the queue's name
//   │   └── DeliveryLost       settling a delivery no longer this worker's
//   ├── StoredCallRejected     a stored call ([[delay]]) this build cannot run:
//   │                          its signature changed, or its arguments do not
//   │                          decode (never retryable: dead-letter it)
//   ├── ReplyError             the server answered with an error (WRONGTYPE,
//   │                          NOPERM, WRONGPASS...); retryable only for the
//   │                          transient ones (LOADING, BUSY, TRYAGAIN...)
//   └── IoError                backend I/O failed (retryable)
//       ├── BackendUnavailable cannot connect to the backend
//       └── TimeoutError       the backend did not answer in time
//
// docs/errors.md has the same tree as a table: when each is thrown, and
// whether it is retryable.
//
// An error raised while taking or giving back a lock, or while claiming a
// [[dedupe]] key, names that key in what() and in key(), whatever its type.
#pragma once

#include "weave/abi.h"

#include <chrono>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

namespace WEAVE_NAMESPACE {

class Error;
namespace detail {
// Names the key an error concerns (once; the innermost key wins); `kind`
// says whose key in what() ("lock", "dedupe key").
WEAVE_API void name_key(Error& e, std::string_view key, std::string_view kind = "lock");
// Says where an error arose: appended to what() as " (<where>)" (the chain
// names the annotation and method whose prepare() threw it).
WEAVE_API void name_where(Error& e, std::string_view where);
}  // namespace detail

class WEAVE_API Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, bool retryable = false)
      : std::runtime_error(what), message_(what), retryable_(retryable) {}
  const char* what() const noexcept override { return message_.c_str(); }
  // True when the same call may succeed if tried again later.
  bool retryable() const noexcept { return retryable_; }
  // The key the failure concerns (a lock key, a dedupe key; for a
  // ConfigError about one option, the option's field name); empty when none.
  const std::string& key() const noexcept { return key_; }

 protected:
  Error(std::string key, const std::string& what, bool retryable)
      : std::runtime_error(what), message_(what), key_(std::move(key)), retryable_(retryable) {}

 private:
  friend void detail::name_key(Error& e, std::string_view key, std::string_view kind);
  friend void detail::name_where(Error& e, std::string_view where);
  std::string message_, key_;
  bool retryable_;
};

class WEAVE_API ConfigError : public Error {
 public:
  explicit ConfigError(const std::string& what) : Error("weave config: " + what), problem_(what) {}
  // About one option: key() is the options field's name ("pool_size").
  ConfigError(const std::string& what, std::string option)
      : Error(std::move(option), "weave config: " + what, false), problem_(what) {}
  // About one field of an options struct: what() names both
  // ("LockOptions::pool_size must be 1..1024, got 0"), problem() the value's
  // fault alone ("must be 1..1024, got 0").
  ConfigError(std::string_view options, std::string option, const std::string& problem)
      : Error(option, "weave config: " + std::string(options) + "::" + option + " " + problem, false),
        problem_(problem) {}
  // What is wrong, without "weave config: " or the struct's name: the
  // loader says it again after where the value came from.
  const std::string& problem() const noexcept { return problem_; }

 private:
  std::string problem_;
};

class WEAVE_API UsageError : public Error {
 public:
  explicit UsageError(const std::string& what) : Error("weave: " + what) {}
};

class WEAVE_API LockError : public Error {
 public:
  LockError(std::string key, const std::string& what, bool retryable) : Error(std::move(key), what, retryable) {}
};

class WEAVE_API LockBusy : public LockError {
 public:
  LockBusy(std::string key, std::chrono::milliseconds waited)
      : LockError(key,
                  "weave: lock '" + key + "' is busy (waited " +
                      std::to_string(waited.count()) + " ms)",
                  true),
        waited_(waited) {}
  std::chrono::milliseconds waited() const noexcept { return waited_; }

 private:
  std::chrono::milliseconds waited_;
};

class WEAVE_API LeaseLost : public LockError {
 public:
  LeaseLost(std::string key, const std::string& cause)
      : LockError(key, "weave: lease on '" + key + "' was lost: " + cause, false) {}
};

// The watchdog renews a lease for at most its max_hold (LockSpec::max_hold,
// [[lock(max_hold=...)]]): a method that ran longer lost its lock.
class WEAVE_API HoldLimitExceeded : public LeaseLost {
 public:
  HoldLimitExceeded(std::string key, std::chrono::milliseconds max_hold, const std::string& cause)
      : LeaseLost(std::move(key), cause), max_hold_(max_hold) {}
  std::chrono::milliseconds max_hold() const noexcept { return max_hold_; }

 private:
  std::chrono::milliseconds max_hold_;
};

// Giving a lease back failed (the backend was unreachable, timed out or
// refused) after the work under it completed. Never retryable: a retry would
// run the work again. The lease runs out by itself. Thrown only under
// ReleaseFailurePolicy::throw_error; by default the failure is counted and
// reported to LockOptions::on_event instead.
class WEAVE_API ReleaseFailed : public LockError {
 public:
  ReleaseFailed(std::string key, const std::string& cause)
      : LockError(key,
                  "weave: lock '" + key + "' was not released (" + cause +
                      "); the work under it completed, do not retry it; the lease runs out by itself",
                  false) {}
};

// A call refused because of an earlier call with the same key. Never
// retryable: trying again would be refused again, or run the work twice.
class WEAVE_API DedupeError : public Error {
 public:
  DedupeError(std::string key, const std::string& what) : Error(std::move(key), what, false) {}
};

// A duplicate of an earlier call: [[dedupe]] (`what` is the annotation's
// message= or says which call ran), or a release=on_expiry lock, a
// duplicate-submit guard whose key still being held means an earlier call
// ran (or runs) within the ttl.
class WEAVE_API DuplicateCall : public DedupeError {
 public:
  DuplicateCall(std::string key, std::chrono::milliseconds waited)
      : DedupeError(key, "weave: duplicate call refused: lock '" + key +
                             "' (release=on_expiry) is still held by an earlier call (waited " +
                             std::to_string(waited.count()) + " ms)"),
        waited_(waited) {}
  DuplicateCall(std::string key, const std::string& what, std::chrono::milliseconds waited = {})
      : DedupeError(std::move(key), what), waited_(waited) {}
  // How long the call waited for the earlier one before it was refused.
  std::chrono::milliseconds waited() const noexcept { return waited_; }

 private:
  std::chrono::milliseconds waited_;
};

// [[dedupe]]: the earlier call with this key is still running, and did not
// finish within the annotation's wait=. Not retryable: it will complete.
class WEAVE_API DuplicateInFlight : public DuplicateCall {
 public:
  DuplicateInFlight(std::string key, std::chrono::milliseconds waited)
      : DuplicateCall(key,
                      "weave: duplicate call refused: an earlier call with key '" + key +
                          "' is still running (waited " + std::to_string(waited.count()) + " ms)",
                      waited) {}
};

// [[dedupe]]: the key was used by an earlier call whose match= value differs:
// a different request reusing an idempotency key. Never a replay of someone
// else's result; not retryable.
class WEAVE_API DedupeMismatch : public DedupeError {
 public:
  DedupeMismatch(const std::string& key, std::string_view first, std::string_view now)
      : DedupeError(key, "weave: dedupe key '" + key + "' was first used with match '" + std::string(first) +
                             "', now with '" + std::string(now) + "'") {}
};

// A rate limit (weave/rate_limit.h) refused the call: admitting it would
// exceed the key's rate or burst. Retryable: retry_after() is how long after
// the refusal the same request would be admitted, by the store's clock.
class WEAVE_API RateLimited : public Error {
 public:
  RateLimited(std::string key, std::chrono::microseconds retry_after)
      : Error(key,
              "weave: rate limit '" + key + "' refused the call (admitted again in " +
                  std::to_string((retry_after.count() + 999) / 1000) + " ms)",
              true),
        retry_after_(retry_after) {}
  std::chrono::microseconds retry_after() const noexcept { return retry_after_; }

 private:
  std::chrono::microseconds retry_after_;
};

// A semaphore (weave/semaphore.h) had no permit free for the call within
// its wait. Retryable: a permit may be free by the next attempt.
class WEAVE_API SemaphoreBusy : public Error {
 public:
  SemaphoreBusy(std::string key, std::uint32_t permits, std::chrono::milliseconds waited)
      : Error(key,
              "weave: semaphore '" + key + "' has all " + std::to_string(permits) + " permits held (waited " +
                  std::to_string(waited.count()) + " ms)",
              true),
        waited_(waited) {}
  std::chrono::milliseconds waited() const noexcept { return waited_; }

 private:
  std::chrono::milliseconds waited_;
};

// No slot of a bulkhead (weave/bulkhead.h) came free within the wait;
// key() is the bulkhead's name. Retryable: slots come free as calls end.
class WEAVE_API BulkheadFull : public Error {
 public:
  BulkheadFull(std::string name, std::uint32_t max, std::chrono::milliseconds waited)
      : Error(name,
              "weave: bulkhead '" + name + "' has all " + std::to_string(max) + " slots taken (waited " +
                  std::to_string(waited.count()) + " ms)",
              true),
        waited_(waited) {}
  std::chrono::milliseconds waited() const noexcept { return waited_; }

 private:
  std::chrono::milliseconds waited_;
};

// A call ran past the deadline of its [[timeout]] or weave::timeout()
// (weave/timeout.h): key() names the method ("the call" from code). When the
// body threw past the deadline (perhaps because its stop token fired), its
// exception is nested in this one (std::rethrow_if_nested). Retryable: a
// later run may finish in time. The store not answering in time is
// TimeoutError, an IoError.
class WEAVE_API TimeoutExceeded : public Error {
 public:
  TimeoutExceeded(std::string name, std::chrono::milliseconds after)
      : Error(name, "weave: " + name + " did not finish within " + std::to_string(after.count()) + " ms", true),
        after_(after) {}
  // The time the call had.
  std::chrono::milliseconds after() const noexcept { return after_; }

 private:
  std::chrono::milliseconds after_;
};

// A circuit breaker (weave/circuit_breaker.h) refused the call: open, or
// half-open with every probe out. key() names the breaker; retry_after() is
// the time until it lets a probe through (0 when half-open). Not retryable:
// the breaker is there to fail fast, and a [[retry]] around it would only
// spend its backoff; try again after retry_after().
class WEAVE_API CircuitOpen : public Error {
 public:
  CircuitOpen(std::string name, std::chrono::milliseconds retry_after)
      : Error(name,
              "weave: circuit breaker '" + name + "' is open (a probe may pass in " +
                  std::to_string(retry_after.count()) + " ms)",
              false),
        retry_after_(retry_after) {}
  std::chrono::milliseconds retry_after() const noexcept { return retry_after_; }

 private:
  std::chrono::milliseconds retry_after_;
};

// A delay queue refused a request (weave/queue.h): a bad name, id, delay or
// payload; key() is the queue's name. Not retryable: the same request is
// refused again.
class WEAVE_API QueueError : public Error {
 public:
  QueueError(std::string queue, const std::string& cause)
      : Error(queue, "weave: queue '" + queue + "': " + cause, false) {}

 protected:
  QueueError(std::string queue, const std::string& what, bool retryable) : Error(std::move(queue), what, retryable) {}
};

// Settling a delivery that is no longer this worker's: its lease ran out and
// the message was taken back (redelivered, maybe running elsewhere now, or
// dead-lettered), or it was cancelled. Nothing was changed; the work it did
// may run again elsewhere.
class WEAVE_API DeliveryLost : public QueueError {
 public:
  DeliveryLost(std::string queue, std::string_view id, const std::string& cause)
      : QueueError(queue, "weave: queue '" + queue + "': message '" + std::string(id) + "' is no longer held: " + cause,
                   false) {}
};

// A stored call ([[delay]]) that this build will not run, because it would
// misread its arguments: it was stored by a build whose method had another
// signature, or its JSON does not decode to the parameter types. Never
// retryable: the same text is refused again; a worker dead-letters it with
// what() as the reason. key() is the method's qualified name.
class WEAVE_API StoredCallRejected : public Error {
 public:
  StoredCallRejected(std::string method, const std::string& why)
      : Error(method, "weave: stored call of " + method + " rejected: " + why, false) {}
};

// `reply` is the server's error text; its first word is the code.
class WEAVE_API ReplyError : public Error {
 public:
  // `hint` (may be empty) says what to do about it (e.g. which ACL rule to add).
  ReplyError(const std::string& context, std::string_view reply, std::string_view hint = {})
      : Error(context + ": " + std::string(reply) + (hint.empty() ? "" : "; " + std::string(hint)),
              transient(code_of(reply))),
        code_(code_of(reply)),
        reply_(reply) {}
  // "WRONGTYPE", "NOPERM", "ERR", "MOVED"...
  const std::string& code() const noexcept { return code_; }
  // The server's error text as sent ("MOVED 5168 127.0.0.1:7001").
  const std::string& reply() const noexcept { return reply_; }

 private:
  static std::string code_of(std::string_view reply) { return std::string(reply.substr(0, reply.find(' '))); }
  // Codes for a state the server leaves on its own.
  static bool transient(std::string_view code) {
    for (std::string_view c : {"LOADING", "BUSY", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "READONLY",
                               "NOREPLICAS", "OOM"})
      if (code == c) return true;
    return false;
  }
  std::string code_;
  std::string reply_;
};

class WEAVE_API IoError : public Error {
 public:
  explicit IoError(const std::string& what) : Error(what, true) {}
};

class WEAVE_API BackendUnavailable : public IoError {
 public:
  explicit BackendUnavailable(const std::string& what) : IoError(what) {}
};

class WEAVE_API TimeoutError : public IoError {
 public:
  explicit TimeoutError(const std::string& what) : IoError(what) {}
};

// Whether an exception is of chosen types (`retry_on=[std::system_error,
// pay::Transient]` is weave::error_is<std::system_error, pay::Transient>).
using ExceptionMatcher = bool (*)(const std::exception_ptr&) noexcept;

// True when `e` holds an exception of one of the types E (or derived from
// one): what `retry_on=[...]`, `record_on=` and `ignore_on=` name, and the
// same for code:
//   weave::RetryPolicy p{.attempts = 4, .retry_on = &weave::error_is<std::system_error, pay::Transient>};
template <class First, class... Rest>
bool error_is(const std::exception_ptr& e) noexcept {
  if (!e) return false;
  try {
    std::rethrow_exception(e);
  } catch (const First&) {
    return true;
  } catch (...) {
    if constexpr (sizeof...(Rest) > 0) return error_is<Rest...>(e);
    return false;
  }
}

}  // namespace weave
