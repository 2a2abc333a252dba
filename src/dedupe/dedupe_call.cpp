// The steps of one [[dedupe]] call (dedupe_call.h); the rules of
// docs/dedupe.md live here once, for the blocking and the suspending driver.
#include "dedupe/dedupe_call.h"

#include <algorithm>

#include "weave/error.h"
#include "weave/result_codec.h"
#include "weave_vocabulary.h"

namespace WEAVE_NAMESPACE::detail {

using std::chrono::milliseconds;

namespace vocab = vocabulary::dedupe;
// The C++ enums follow the vocabulary's order (weavegen emits indexes into it).
static_assert(vocab::on_duplicate_values[static_cast<int>(OnDuplicate::skip)] == "skip" &&
              vocab::on_duplicate_values[static_cast<int>(OnDuplicate::replay)] == "replay");
static_assert(vocab::on_error_values[static_cast<int>(OnError::remember)] == "remember");

std::shared_ptr<const DedupeSettings> DedupeSettings::parse(const AnnotationSpec& spec) {
  const Annotation a(spec, {});
  auto p = std::make_shared<DedupeSettings>();
  DedupeSettings& s = *p;
  s.window = vocab::window;
  s.on_duplicate = static_cast<OnDuplicate>(vocab::on_duplicate);
  s.wait = vocab::wait;
  s.on_error = static_cast<OnError>(vocab::on_error);
  const ArgValue* k = a.find("key");
  if (k && k->kind == ArgValue::Kind::key_template) s.key_slot = k->first;
  else if (k) s.key = std::string(a.text("key"));
  s.series = &dedupe_series(!k ? std::string_view() : s.key ? std::string_view(*s.key) : k->text);
  if (const ArgValue* m = a.find("match"); m && m->kind == ArgValue::Kind::key_template) s.match_slot = m->first;
  else if (m) s.match = a.text("match");
  if (a.has("window")) s.window = a.duration("window");
  if (a.has("on_duplicate"))
    s.on_duplicate = static_cast<OnDuplicate>(a.choice("on_duplicate", vocab::on_duplicate_values));
  if (a.has("message")) s.message = std::string(a.text("message"));
  if (a.has("wait")) s.wait = a.duration("wait");
  if (a.has("on_error")) s.on_error = static_cast<OnError>(a.choice("on_error", vocab::on_error_values));
  return p;
}

DedupeCall::DedupeCall(Invocation& inv, DedupeRuntime& rt)
    : inv_(inv), s_(*inv.prepared<DedupeSettings>()), rt_(rt) {
  const Annotation& a = inv.annotation();
  key_ = s_.key_slot >= 0 ? a.rendered(s_.key_slot) : s_.key ? std::string_view(*s_.key) : inv.method();
  match_ = s_.match_slot >= 0 ? a.rendered(s_.match_slot) : std::string_view(s_.match);
  const DedupeOptions& o = rt_.options();
  if (key_.empty())
    throw UsageError("dedupe on " + std::string(inv.method()) + ": the key rendered empty (check its template)");
  if (key_.size() > o.max_key_bytes)
    throw ConfigError("dedupe on " + std::string(inv.method()) + ": key '" + std::string(key_.substr(0, 64)) +
                      "...' is " + std::to_string(key_.size()) + " bytes, over max_key_bytes " +
                      std::to_string(o.max_key_bytes));
  if (s_.window <= milliseconds(0) || s_.window > o.max_window)
    throw ConfigError("dedupe on " + std::string(inv.method()) + " (key '" + std::string(key_) + "'): window " +
                      std::to_string(s_.window.count()) + "ms is outside 1ms.." +
                      std::to_string(o.max_window.count()) + "ms (DedupeOptions::max_window)");
  if (s_.on_duplicate == OnDuplicate::replay) {
    codec_ = inv.result_codec();
    if (!codec_)
      throw UsageError("dedupe(on_duplicate=replay) on " + std::string(inv.method()) +
                       ": the method has no result codec (regenerate its proxy with this weavegen)");
  }
  owner_ = rt_.owner_for(key_);
  started_ = Clock::now();
  deadline_ = started_ + s_.wait;
  sent_ = started_;  // when the claim that succeeds was sent: its lease runs from about then
}

bool DedupeCall::in_process() const noexcept { return rt_.in_process(); }

void DedupeCall::count(std::atomic<std::uint64_t> DedupeCounterStripe::*field) const {
  rt_.count(*s_.series, field);
}

// A store failure while claiming names the key it was for (what(), key()).
template <class F>
auto DedupeCall::naming_key(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (Error& e) {
    name_key(e);
    throw;
  }
}

void DedupeCall::prepare_wait() {
  // Kept across wake-ups: a woken duplicate claims again at once, with no
  // new subscription round trip.
  wait_prepared_ = true;
  if (s_.wait > milliseconds(0)) waiter_ = naming_key([&] { return rt_.store().prepare_wait(key_); });
}

DedupeCall::Step DedupeCall::claim_once() {
  const ClaimRequest r = claim_request();
  ClaimOutcome got;
  try {
    got = rt_.store().claim(r.key, r.owner, r.match, r.lease);
  } catch (Error& e) {
    claim_failed(e);
    throw;
  }
  return claimed(got);
}

void DedupeCall::claim_failed(Error& e) {
  name_key(e);
  if (dynamic_cast<const IoError*>(&e)) rt_.unanswered_claim(key_, owner_);
}

DedupeCall::ClaimRequest DedupeCall::claim_request() {
  if (waited_) sent_ = Clock::now();
  return {key_, owner_, match_, rt_.options().claim_lease};
}

void DedupeCall::name_key(Error& e) const { detail::name_key(e, key_, "dedupe key"); }

DedupeCall::Step DedupeCall::claimed(const ClaimOutcome& got) {
  if (got.claimed) {
    waiter_.reset();  // the first call runs without it
    return {Step::first, {}};
  }
  if (got.readable && got.existing.kind == 'r' && got.existing.rest == owner_ && got.existing.match == match_) {
    // This owner's own claim: a request whose answer never came was
    // recorded (resent, or this call took its owner). Its lease runs from
    // that request: its store ttl says how much is left.
    milliseconds left = got.ttl_left > milliseconds(0) ? got.ttl_left
                                                       : naming_key([&] { return rt_.store().ttl_left(key_); });
    sent_ = Clock::now() - (rt_.options().claim_lease - std::min(left, rt_.options().claim_lease));
    waiter_.reset();
    return {Step::first, {}};
  }
  if (!got.readable)
    throw DuplicateCall(std::string(key_), "weave: dedupe key '" + std::string(key_) +
                                               "' holds a record of an unknown shape (written by another "
                                               "version?); it answers duplicates until it expires");
  const DedupeRecord& r = got.existing;
  if (r.match != match_) {
    count(&DedupeCounterStripe::mismatches);
    throw DedupeMismatch(std::string(key_), r.match, std::string(match_));
  }
  if (r.kind == 'r') {
    if (s_.wait > milliseconds(0) && !wait_prepared_) return {Step::wait_prepared, {}};
    const auto now = Clock::now();
    if (now >= deadline_) {
      count(&DedupeCounterStripe::in_flight_refused);
      if (waited_) s_.series->wait.observe(now - started_);
      throw DuplicateInFlight(std::string(key_), std::chrono::duration_cast<milliseconds>(now - started_));
    }
    waited_ = true;
    // Woken by the first call's finish; a crashed first call's claim runs
    // out by itself: look again by then (at most one claim lease on).
    milliseconds left = got.ttl_left > milliseconds(0) ? got.ttl_left
                                                       : naming_key([&] { return rt_.store().ttl_left(key_); });
    if (left <= milliseconds(0)) left = rt_.options().claim_lease;
    return {Step::wait, std::min(deadline_, now + left)};
  }
  count(&DedupeCounterStripe::duplicates);
  if (waited_) {
    count(&DedupeCounterStripe::waited);
    s_.series->wait.observe(Clock::now() - started_);
  }
  answer(r);
  return {Step::answered, {}};
}

void DedupeCall::answer(const DedupeRecord& r) {
  const std::string key(key_);
  if (r.kind == 'e')
    throw DuplicateCall(key, s_.message.empty()
                                 ? "weave: duplicate of a call with key '" + key + "' that failed: " + r.rest
                                 : s_.message + " (the first call failed: " + r.rest + ")");
  switch (s_.on_duplicate) {
    case OnDuplicate::skip:
      return;  // the proxy returns void / std::nullopt
    case OnDuplicate::replay:
      try {
        inv_.complete_from_json(r.rest);
      } catch (const std::exception& e) {
        throw DuplicateCall(key, "weave: duplicate of a call with key '" + key +
                                     "' whose stored result no longer fits " + std::string(codec_->type_name) + ": " +
                                     e.what());
      }
      count(&DedupeCounterStripe::replays);
      return;
    case OnDuplicate::fail:
      break;
  }
  throw DuplicateCall(key, s_.message.empty()
                               ? "weave: duplicate call refused: a call with key '" + key + "' already ran"
                               : s_.message);
}

std::shared_ptr<HeldClaim> DedupeCall::hold() {
  count(&DedupeCounterStripe::first_calls);
  return rt_.hold(key_, std::move(owner_), match_, sent_, *s_.series);
}

void DedupeCall::failed(const std::exception_ptr& error, HeldClaim& held) noexcept {
  if (s_.on_error == OnError::forget) {
    forget_quietly(held);  // a retry runs at once
    rt_.count(held.series(), &DedupeCounterStripe::forgotten);
    return;
  }
  rt_.count(held.series(), &DedupeCounterStripe::remembered);
  try {
    std::string what = "a non-standard exception";
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    finish(DedupeRecord{'e', held.match(), std::move(what)}, held);
  } catch (...) {
    // (finish reports store failures itself; only the record's copy may throw)
  }
}

void DedupeCall::succeeded(HeldClaim& held) { finish(success_record(held), held); }

DedupeRecord DedupeCall::success_record(HeldClaim& held) {
  // A result that cannot be stored fails this call, not a replay. A claim
  // lost meanwhile is not finished (its caller still gets the result: the
  // method ran for it).
  DedupeRecord done{'d', std::string(match_), {}};
  if (codec_ && inv_.result()) {
    try {
      done.rest = codec_->encode(inv_.result());
    } catch (...) {
      forget_quietly(held);
      throw;
    }
  }
  return done;
}

void DedupeCall::finish(const DedupeRecord& outcome, HeldClaim& held) noexcept {
  if (!finish_begins(held)) return;
  bool stored = false;
  try {
    stored = rt_.store().finish(held.key(), held.owner_token(), held.match(), outcome, s_.window);
  } catch (const std::exception& e) {
    return finish_failed(held, e);
  }
  finish_ends(held, stored);
}

bool DedupeCall::finish_begins(HeldClaim& held) noexcept {
  // A claim already known lost is not written over whoever holds the key now.
  if (held.lost()) {
    held.report_lost_once();
    return false;
  }
  held.settle();  // a renewal meeting the record is not a loss
  return true;
}

void DedupeCall::finish_failed(HeldClaim& held, const std::exception& e) noexcept { rt_.report(held, e); }

void DedupeCall::finish_ends(HeldClaim& held, bool stored) noexcept {
  if (!stored) {
    // Counted (claims_lost) when marked, and reported once as lease_lost.
    held.record_lost("the store found the claim gone when the call finished");  // (no-op when known lost)
    held.report_lost_once();
  }
}

void DedupeCall::forget_quietly(HeldClaim& held) noexcept {
  held.settle();
  try {
    rt_.store().forget(held.key(), held.owner_token(), held.match());
  } catch (const std::exception& e) {
    rt_.report(held, e);
  }
}

}  // namespace weave::detail
