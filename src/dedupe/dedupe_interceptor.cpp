// The built-in `dedupe` interceptor (docs/dedupe.md): claim the key in one
// step, run the method under the claim (renewed while it runs), record the
// outcome for the window; a duplicate gets the configured answer.
#include <chrono>
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <string>

#include "core/builtin.h"
#include "dedupe/dedupe_runtime.h"
#include "weave/error.h"
#include "weave/interceptor.h"
#include "weave/invocation.h"
#include "weave_vocabulary.h"
#include "weave/result_codec.h"

namespace WEAVE_NAMESPACE {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

enum class OnDuplicate { fail, skip, replay };
enum class OnError { forget, remember };

namespace vocab = vocabulary::dedupe;
// The C++ enums follow the vocabulary's order (weavegen emits indexes into it).
static_assert(vocab::on_duplicate_values[static_cast<int>(OnDuplicate::skip)] == "skip" &&
              vocab::on_duplicate_values[static_cast<int>(OnDuplicate::replay)] == "replay");
static_assert(vocab::on_error_values[static_cast<int>(OnError::remember)] == "remember");

// An argument not written takes the vocabulary's default (annotations/dedupe.json).
struct Settings {
  // The key and match templates' slots, rendered per call, or -1: the text
  // written (weavegen's default key is the qualified name); without a key,
  // the method's name, without a match, "".
  int key_slot = -1, match_slot = -1;
  std::optional<std::string> key;
  std::string match;
  milliseconds window = vocab::window;
  OnDuplicate on_duplicate = static_cast<OnDuplicate>(vocab::on_duplicate);
  std::string message;
  milliseconds wait = vocab::wait;
  OnError on_error = static_cast<OnError>(vocab::on_error);
  detail::DedupeSeries* series = nullptr;  // the metrics of the key template (or of the key written)
};

// Throws UsageError for a value outside the vocabulary.
Settings read_settings(const Annotation& a) {
  Settings s;
  const ArgValue* k = a.find("key");
  if (k && k->kind == ArgValue::Kind::key_template) s.key_slot = k->first;
  else if (k) s.key = std::string(a.text("key"));
  s.series = &detail::dedupe_series(!k ? std::string_view() : s.key ? std::string_view(*s.key) : k->text);
  if (const ArgValue* m = a.find("match"); m && m->kind == ArgValue::Kind::key_template) s.match_slot = m->first;
  else if (m) s.match = a.text("match");
  if (a.has("window")) s.window = a.duration("window");
  if (a.has("on_duplicate"))
    s.on_duplicate = static_cast<OnDuplicate>(a.choice("on_duplicate", vocab::on_duplicate_values));
  if (a.has("message")) s.message = std::string(a.text("message"));
  if (a.has("wait")) s.wait = a.duration("wait");
  if (a.has("on_error")) s.on_error = static_cast<OnError>(a.choice("on_error", vocab::on_error_values));
  return s;
}

class DedupeInterceptor final : public Interceptor {
 public:
  // Every call's chain runs this first (generated or written by hand); a
  // bad value fails the call, and the chain names the method.
  std::shared_ptr<const void> prepare(const AnnotationSpec& spec) override {
    return std::make_shared<Settings>(read_settings(Annotation(spec, {})));
  }

  void around(Invocation& inv) override {
    const Annotation& a = inv.annotation();
    const Settings& s = *inv.prepared<Settings>();
    const std::string_view key = s.key_slot >= 0 ? a.rendered(s.key_slot)
                                 : s.key          ? std::string_view(*s.key)
                                                  : inv.method();
    const std::string_view match = s.match_slot >= 0 ? a.rendered(s.match_slot) : std::string_view(s.match);
    const detail::DedupeRuntimeRef rt;
    check_input(inv, *rt, key, s);
    const ResultCodec* codec = s.on_duplicate == OnDuplicate::replay ? &codec_of(inv) : nullptr;
    detail::DedupeSeries& series = *s.series;
    auto count = [&](std::atomic<std::uint64_t> detail::DedupeCounterStripe::*field) { rt->count(series, field); };
    detail::ClaimStore& store = rt->store();
    std::string owner = detail::unique_token();

    // 1. claim, or answer as a duplicate (waiting for a running first call up to wait=)
    const auto started = Clock::now();
    const auto deadline = started + s.wait;
    auto sent = started;  // when the claim that succeeds was sent: its lease runs from about then
    bool waited = false;
    // Subscribed before the first claim (a finish in between is not missed)
    // and kept across wake-ups: a woken duplicate claims again at once, with
    // no new subscription round trip.
    std::unique_ptr<detail::ClaimWaiter> waiter;
    if (s.wait > milliseconds(0)) waiter = naming_key(key, [&] { return store.prepare_wait(key); });
    for (;;) {
      if (waited) sent = Clock::now();
      detail::ClaimOutcome got =
          naming_key(key, [&] { return store.claim(key, owner, match, rt->options().claim_lease); });
      if (got.claimed) {
        waiter.reset();  // the first call runs without it
        break;
      }
      if (!got.readable)
        throw DuplicateCall(std::string(key), "weave: dedupe key '" + std::string(key) +
                                                  "' holds a record of an unknown shape (written by another "
                                                  "version?); it answers duplicates until it expires");
      const detail::DedupeRecord& r = got.existing;
      if (r.match != match) {
        count(&detail::DedupeCounterStripe::mismatches);
        throw DedupeMismatch(std::string(key), r.match, match);
      }
      if (r.kind == 'r') {
        const auto now = Clock::now();
        if (now >= deadline) {
          count(&detail::DedupeCounterStripe::in_flight_refused);
          if (waited) series.wait.observe(now - started);
          throw DuplicateInFlight(std::string(key), std::chrono::duration_cast<milliseconds>(now - started));
        }
        waited = true;
        // Woken by the first call's finish; a crashed first call's claim runs
        // out by itself: look again by then (at most one claim lease on).
        milliseconds left =
            got.ttl_left > milliseconds(0) ? got.ttl_left : naming_key(key, [&] { return store.ttl_left(key); });
        if (left <= milliseconds(0)) left = rt->options().claim_lease;
        const auto until = std::min(deadline, now + left);
        if (waiter) waiter->wait_until(until);
        continue;
      }
      count(&detail::DedupeCounterStripe::duplicates);
      if (waited) {
        count(&detail::DedupeCounterStripe::waited);
        series.wait.observe(Clock::now() - started);
      }
      return answer(inv, s, key, r, codec, [&] { count(&detail::DedupeCounterStripe::replays); });
    }

    // 2. the first call: run under the claim, renewed while it runs; the body
    // sees it as weave::current_dedupe_claim()
    count(&detail::DedupeCounterStripe::first_calls);
    const std::shared_ptr<detail::HeldClaim> held = rt->hold(key, std::move(owner), match, sent, series);
    struct Release {
      detail::DedupeRuntime& rt;
      detail::HeldClaim& held;
      ~Release() { rt.release(held); }
    } release{*rt, *held};
    try {
      detail::ContextPush in_context(held->context_link(detail::context_head()));
      inv.proceed();
    } catch (const std::exception& e) {
      record_failure(*rt, s, e.what(), *held);
      throw;
    } catch (...) {
      record_failure(*rt, s, "a non-standard exception", *held);
      throw;
    }
    // 3. record the outcome; a result that cannot be stored fails this call,
    // not a replay. A claim lost meanwhile is not finished (its caller still
    // gets the result: the method ran for it).
    detail::DedupeRecord done{'d', std::string(match), {}};
    if (codec && inv.result()) {
      try {
        done.rest = codec->encode(inv.result());
      } catch (...) {
        forget_quietly(*rt, *held);
        throw;
      }
    }
    finish(*rt, done, s.window, *held);
  }

 private:
  static const ResultCodec& codec_of(const Invocation& inv) {
    const ResultCodec* codec = inv.result_codec();
    if (!codec)
      throw UsageError("dedupe(on_duplicate=replay) on " + std::string(inv.method()) +
                       ": the method has no result codec (regenerate its proxy with this weavegen)");
    return *codec;
  }

  // A store failure while claiming names the key it was for (what(), key()).
  template <class F>
  static auto naming_key(std::string_view key, F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (Error& e) {
      detail::name_key(e, key, "dedupe key");
      throw;
    }
  }

  static void check_input(const Invocation& inv, const detail::DedupeRuntime& rt, std::string_view key,
                          const Settings& s) {
    const DedupeOptions& o = rt.options();
    if (key.empty())
      throw UsageError("dedupe on " + std::string(inv.method()) + ": the key rendered empty (check its template)");
    if (key.size() > o.max_key_bytes)
      throw ConfigError("dedupe on " + std::string(inv.method()) + ": key '" + std::string(key.substr(0, 64)) +
                        "...' is " + std::to_string(key.size()) + " bytes, over max_key_bytes " +
                        std::to_string(o.max_key_bytes));
    if (s.window <= milliseconds(0) || s.window > o.max_window)
      throw ConfigError("dedupe on " + std::string(inv.method()) + " (key '" + std::string(key) + "'): window " +
                        std::to_string(s.window.count()) + "ms is outside 1ms.." +
                        std::to_string(o.max_window.count()) + "ms (DedupeOptions::max_window)");
  }

  template <class CountReplay>
  static void answer(Invocation& inv, const Settings& s, std::string_view key, const detail::DedupeRecord& r,
                     const ResultCodec* codec, CountReplay&& count_replay) {
    if (r.kind == 'e')
      throw DuplicateCall(std::string(key), s.message.empty()
                                                ? "weave: duplicate of a call with key '" + std::string(key) +
                                                      "' that failed: " + r.rest
                                                : s.message + " (the first call failed: " + r.rest + ")");
    switch (s.on_duplicate) {
      case OnDuplicate::skip:
        return;  // the proxy returns void / std::nullopt
      case OnDuplicate::replay:
        try {
          inv.complete_from_json(r.rest);
        } catch (const std::exception& e) {
          throw DuplicateCall(std::string(key), "weave: duplicate of a call with key '" + std::string(key) +
                                                    "' whose stored result no longer fits " +
                                                    std::string(codec->type_name) + ": " + e.what());
        }
        count_replay();
        return;
      case OnDuplicate::fail:
        break;
    }
    throw DuplicateCall(std::string(key), s.message.empty() ? "weave: duplicate call refused: a call with key '" +
                                                                  std::string(key) + "' already ran"
                                                            : s.message);
  }

  static void finish(detail::DedupeRuntime& rt, const detail::DedupeRecord& outcome, milliseconds window,
                     detail::HeldClaim& held) {
    bool stored = false;
    try {
      // A claim already known lost is not written over whoever holds the key now.
      if (held.lost()) return held.report_lost_once();
      held.settle();  // a renewal meeting the record is not a loss
      stored = rt.store().finish(held.key(), held.owner_token(), held.match(), outcome, window);
    } catch (const std::exception& e) {
      rt.report(held, e);
      return;
    }
    if (!stored) {
      // Counted (claims_lost) when marked, and reported once as lease_lost.
      held.record_lost("the store found the claim gone when the call finished");  // (no-op when known lost)
      held.report_lost_once();
    }
  }

  static void forget_quietly(detail::DedupeRuntime& rt, detail::HeldClaim& held) {
    held.settle();
    try {
      rt.store().forget(held.key(), held.owner_token(), held.match());
    } catch (const std::exception& e) {
      rt.report(held, e);
    }
  }

  static void record_failure(detail::DedupeRuntime& rt, const Settings& s, const char* what,
                             detail::HeldClaim& held) {
    if (s.on_error == OnError::forget) {
      forget_quietly(rt, held);  // a retry runs at once
      rt.count(held.series(), &detail::DedupeCounterStripe::forgotten);
      return;
    }
    rt.count(held.series(), &detail::DedupeCounterStripe::remembered);
    finish(rt, detail::DedupeRecord{'e', held.match(), what}, s.window, held);
  }
};

}  // namespace

// Registers `dedupe` with Weave::core when this library is linked:
// cmake/link/weave_link_dedupe.cpp refers to weave_link_dedupe.
extern "C" WEAVE_API const char weave_link_dedupe = 0;

namespace {
[[maybe_unused]] const bool dedupe_registered = [] {
  detail::register_builtin_interceptor("dedupe",
                                       [] { return std::shared_ptr<Interceptor>(std::make_shared<DedupeInterceptor>()); });
  // weave::configure(): the shared URL, unless WEAVE_DEDUPE_URL names dedupe's own.
  detail::register_url_configurer("dedupe", [](const std::string& url) {
    const char* own = std::getenv("WEAVE_DEDUPE_URL");
    configure_dedupe({.url = own && *own ? std::string(own) : url});
  });
  return true;
}();
}  // namespace

}  // namespace weave
