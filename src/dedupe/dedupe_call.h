// One [[dedupe]] call as steps, so that the blocking interceptor
// (dedupe_interceptor.cpp) and the suspending one (src/dedupe/asio/) drive
// one set of rules: claiming, answering a duplicate (mismatch, replay, skip,
// refuse), waiting for a running first call, recording the outcome.
//
//   DedupeCall c(inv);                         // checks the input
//   c.prepare_wait();                          // store call (when wait= > 0)
//   for (;;) {
//     DedupeCall::Step s = c.claim_once();     // store call; may throw the duplicate's answer
//     if (s.kind == Step::answered) return;    // replayed, skipped
//     if (s.kind == Step::first) break;
//     wait for c.waiter() until s.until;
//   }
//   auto held = c.hold();                      // the first call's claim, renewed
//   ... run the method with the claim in the call's context ...
//   c.failed(error, *held) / c.succeeded(*held) // store calls
#pragma once

#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "dedupe/dedupe_runtime.h"
#include "weave/error.h"
#include "weave/invocation.h"

namespace WEAVE_NAMESPACE::detail {

enum class OnDuplicate { fail, skip, replay };
enum class OnError { forget, remember };

// What [[dedupe(...)]] says, read once per method (the interceptor's prepare()).
struct DedupeSettings {
  // The key and match templates' slots, rendered per call, or -1: the text
  // written (weavegen's default key is the qualified name); without a key,
  // the method's name, without a match, "".
  int key_slot = -1, match_slot = -1;
  std::optional<std::string> key;
  std::string match;
  std::chrono::milliseconds window{0};
  OnDuplicate on_duplicate = OnDuplicate::fail;
  std::string message;
  std::chrono::milliseconds wait{0};
  OnError on_error = OnError::forget;
  DedupeSeries* series = nullptr;  // the metrics of the key template (or of the key written)

  // Throws UsageError for a value outside the vocabulary; arguments not
  // written take its defaults (annotations/dedupe.json).
  static std::shared_ptr<const DedupeSettings> parse(const AnnotationSpec& spec);
};

class DedupeCall {
 public:
  using Clock = std::chrono::steady_clock;
  // Reads the call's key and match; throws for an empty or oversized key or
  // a window out of range, and (replay) a method without a result codec.
  // `rt` outlives the call: a blocking call's DedupeRuntimeRef, or a
  // coroutine's shared_ptr (a Ref counts on its thread, and a coroutine moves).
  DedupeCall(Invocation& inv, DedupeRuntime& rt);

  DedupeRuntime& runtime() const noexcept { return rt_; }
  // True when the store lives in this process (mem://): its calls cost less
  // than a thread hop.
  bool in_process() const noexcept;

  // Subscribes to the key's changes before the first claim (when wait= > 0),
  // so a finish in between is not missed. Store call.
  void prepare_wait();
  ClaimWaiter* waiter() const noexcept { return waiter_.get(); }

  struct Step {
    // wait_prepared: a running first call, met before prepare_wait(): prepare
    // it and claim again at once.
    enum Kind { first, answered, wait, wait_prepared } kind = first;
    Clock::time_point until{};  // wait: look again by then (woken earlier by the first call's end)
  };
  // One claim (store call): the first call (claimed), a duplicate answered
  // (the call completed with a replay, or skipped), or a running first call
  // to wait for. Throws the duplicate's refusal (DuplicateCall,
  // DuplicateInFlight at the deadline, DedupeMismatch).
  Step claim_once();
  // claim_once() in steps, for a driver that makes the store call itself:
  // the claim to send, then what the store answered (a store error:
  // claim_failed(), as claim_once() does). A driver may claim before
  // prepare_wait(): only a running first call needs the wait (wait_prepared).
  struct ClaimRequest {
    std::string_view key, owner, match;
    std::chrono::milliseconds lease;
  };
  ClaimRequest claim_request();
  Step claimed(const ClaimOutcome& got);
  // A store error of the claim: names the key in it; an IoError (the claim
  // may have been recorded) leaves the owner to the key's next call here.
  void claim_failed(Error& e);
  void name_key(Error& e) const;

  // The first call's claim, renewed while the method runs (no store call).
  std::shared_ptr<HeldClaim> hold();
  // The method threw `error`: forget the claim, or remember the failure
  // (its what(), or "a non-standard exception"). Store call; never throws.
  void failed(const std::exception_ptr& error, HeldClaim& held) noexcept;
  // The method returned: record the outcome (its result, when replayed).
  // Store call; a result that cannot be encoded throws (and forgets).
  void succeeded(HeldClaim& held);
  // succeeded() in steps, for a driver that makes the store call itself:
  // the record to write (a result that cannot be encoded forgets the claim
  // and throws); finish_begins() false: nothing to write (the claim is known
  // lost, and reported); the store's finish(held, record, window()), then
  // finish_ends() with what it returned, or finish_failed() with its error.
  DedupeRecord success_record(HeldClaim& held);
  bool finish_begins(HeldClaim& held) noexcept;
  void finish_ends(HeldClaim& held, bool stored) noexcept;
  void finish_failed(HeldClaim& held, const std::exception& e) noexcept;
  std::chrono::milliseconds window() const noexcept { return s_.window; }
  void release(HeldClaim& held) noexcept { rt_.release(held); }

 private:
  Invocation& inv_;
  const DedupeSettings& s_;
  DedupeRuntime& rt_;
  std::string_view key_, match_;
  const ResultCodec* codec_ = nullptr;
  std::string owner_;
  Clock::time_point started_, deadline_, sent_;
  bool waited_ = false;
  bool wait_prepared_ = false;  // prepare_wait() ran
  std::unique_ptr<ClaimWaiter> waiter_;

  void count(std::atomic<std::uint64_t> DedupeCounterStripe::*field) const;
  template <class F>
  auto naming_key(F&& f) -> decltype(f());
  void answer(const DedupeRecord& r);
  void finish(const DedupeRecord& outcome, HeldClaim& held) noexcept;
  void forget_quietly(HeldClaim& held) noexcept;
};

}  // namespace weave::detail
