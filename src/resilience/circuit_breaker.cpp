// weave/circuit_breaker.h: the state machine (circuit_state.h), passes,
// breakers shared by name, their events and metrics.
#include <algorithm>
#include <string>

#include "core/events.h"
#include "core/metrics.h"
#include "resilience/circuit_state.h"
#include "resilience/named_states.h"
#include "resilience/resilience_runtime.h"
#include "weave/circuit_breaker.h"
#include "weave/duration.h"
#include "weave/error.h"
#include "weave/event.h"

namespace WEAVE_NAMESPACE {

namespace {
constexpr std::uint32_t kMaxWindowCalls = 100'000;
constexpr std::uint32_t kMaxMinCalls = 1'000'000;
constexpr std::uint32_t kMaxHalfOpenCalls = 10'000;
constexpr int kBuckets = 10;

}  // namespace

void check_circuit_breaker_policy(const CircuitBreakerPolicy& p) {
  auto bad = [](const std::string& what) { throw UsageError("circuit_breaker: " + what); };
  auto ms = [](std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; };
  if (p.failure_rate < 1 || p.failure_rate > 100)
    bad("failure_rate must be 1 to 100 %, not " + std::to_string(p.failure_rate));
  if (p.slow_call_rate < 1 || p.slow_call_rate > 100)
    bad("slow_call_rate must be 1 to 100 %, not " + std::to_string(p.slow_call_rate));
  if (p.slow_call.count() < 0 || p.slow_call > max_duration)
    bad("slow_call must be 0 (none) to weave::max_duration, not " + ms(p.slow_call));
  if (p.window_calls > kMaxWindowCalls)
    bad("window_calls must be at most " + std::to_string(kMaxWindowCalls) + ", not " + std::to_string(p.window_calls));
  if (p.window_calls == 0 && (p.window < std::chrono::milliseconds(100) || p.window > max_duration))
    bad("window must be 100 ms to weave::max_duration, not " + ms(p.window));
  if (p.min_calls < 1 || p.min_calls > kMaxMinCalls)
    bad("min_calls must be 1 to " + std::to_string(kMaxMinCalls) + ", not " + std::to_string(p.min_calls));
  if (p.window_calls > 0 && p.min_calls > p.window_calls)
    bad("min_calls (" + std::to_string(p.min_calls) + ") is over window_calls (" + std::to_string(p.window_calls) +
        "): it could never open");
  if (p.open_for.count() < 1 || p.open_for > max_duration)
    bad("open_for must be 1 ms to weave::max_duration, not " + ms(p.open_for));
  if (p.shared && p.window_calls > 0)
    bad("a shared breaker needs the time-based window (window), not window_calls: the fleet's calls have no one order");
  if (p.half_open_calls < 1 || p.half_open_calls > kMaxHalfOpenCalls)
    bad("half_open_calls must be 1 to " + std::to_string(kMaxHalfOpenCalls) + ", not " +
        std::to_string(p.half_open_calls));
}

std::string_view to_string(CircuitState s) noexcept {
  switch (s) {
    case CircuitState::closed: return "closed";
    case CircuitState::open: return "open";
    case CircuitState::half_open: return "half_open";
  }
  return "unknown";
}

namespace detail {

std::int64_t CircuitBreakerState::coarse_now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(coarse_now().time_since_epoch()).count();
}

CircuitBreakerState::CircuitBreakerState(std::string name, const CircuitBreakerPolicy& policy, NowNs now)
    : name_(std::move(name)),
      policy_(policy),
      now_(now),
      bucket_ns_(std::chrono::duration_cast<std::chrono::nanoseconds>(policy.window).count() / kBuckets),
      phase_(circuit_phase(1, CircuitState::closed)) {
  if (name_.empty()) throw UsageError("circuit_breaker: the name is empty");
  check_circuit_breaker_policy(policy_);
  if (policy_.window_calls > 0) {
    ring_ = std::make_unique<std::atomic<std::uint8_t>[]>(policy_.window_calls);
    for (std::uint32_t i = 0; i < policy_.window_calls; ++i) ring_[i].store(0, std::memory_order_relaxed);
  }
  if (policy_.shared) {
    runtime_ = resilience_runtime_slot().get();
    shared_ = &runtime_->shared_circuit(name_, policy_);
  }
}

CircuitAdmission CircuitBreakerState::admit() noexcept {
  if (shared_) {
    const std::uint64_t p = shared_->phase();
    if (p != 0) {
      if (circuit_phase_state(p) == CircuitState::closed) return {p | SharedCircuit::kShared};
      const CircuitAdmission a = shared_->ask(runtime_->circuits(), p);
      if (a) return a;
      if (!a.fallback) {
        counts_.refused.fetch_add(1, std::memory_order_relaxed);
        return {};
      }
    }
    counts_.local.fetch_add(1, std::memory_order_relaxed);
  }
  return admit_local();
}

CircuitState CircuitBreakerState::state() const noexcept {
  if (shared_)
    if (const std::uint64_t p = shared_->phase()) return circuit_phase_state(p);
  return circuit_phase_state(phase_.load(std::memory_order_acquire));
}

CircuitAdmission CircuitBreakerState::admit_local() noexcept {
  for (;;) {
    const std::uint64_t p = phase_.load(std::memory_order_acquire);
    switch (circuit_phase_state(p)) {
      case CircuitState::closed: return {p};
      case CircuitState::open:
        if (now_() < open_until_ns_.load(std::memory_order_acquire)) {
          counts_.refused.fetch_add(1, std::memory_order_relaxed);
          return {};
        }
        move(p, CircuitState::half_open);
        continue;  // (half-open now, or moved on by another thread)
      case CircuitState::half_open: {
        bool overdue = false;
        {
          Guard g(mutex_);
          if (phase_.load(std::memory_order_relaxed) != p) continue;
          if (probes_out_ + probes_ended_.calls < policy_.half_open_calls) {
            ++probes_out_;
            return {p};
          }
          // Every probe is out: past open_for since they went, they are
          // overdue (a body that never ends must not hold it half-open).
          overdue = now_() - half_open_since_ns_ >=
                    std::chrono::duration_cast<std::chrono::nanoseconds>(policy_.open_for).count();
        }
        counts_.refused.fetch_add(1, std::memory_order_relaxed);
        if (overdue) move(p, CircuitState::open);
        return {};
      }
    }
  }
}

void CircuitBreakerState::record(const CircuitAdmission& a, int outcome, bool slow) noexcept {
  const bool failed = outcome == 2;
  if (outcome != 0) {
    (failed ? counts_.failed : counts_.succeeded).fetch_add(1, std::memory_order_relaxed);
    if (slow) counts_.slow.fetch_add(1, std::memory_order_relaxed);
  }
  if (a.phase & SharedCircuit::kShared) {
    const std::uint64_t phase = a.phase & ~SharedCircuit::kShared;
    if (a.probe != 0) shared_->probe_ended(runtime_->circuits(), phase, a.probe, outcome, slow);
    else shared_->count(phase, outcome, slow);
    return;
  }
  const std::uint64_t phase = a.phase;
  if (phase_.load(std::memory_order_acquire) != phase) return;  // let through before a change: not counted
  if (circuit_phase_state(phase) == CircuitState::closed) {
    if (outcome == 0) return;
    add_to_window(failed, slow);
    if ((failed || slow) && circuit_over_threshold(policy_, window_totals(), policy_.min_calls))
      move(phase, CircuitState::open);
    return;
  }
  // A probe of a half-open breaker.
  CircuitState next = CircuitState::half_open;
  {
    Guard g(mutex_);
    if (phase_.load(std::memory_order_relaxed) != phase) return;
    --probes_out_;
    if (outcome == 0) return;  // its place goes to another call
    ++probes_ended_.calls;
    if (failed) ++probes_ended_.failures;
    if (slow) ++probes_ended_.slows;
    next = circuit_probes_verdict(policy_, probes_ended_);
  }
  if (next != CircuitState::half_open) move(phase, next);
}

void CircuitBreakerState::add_to_window(bool failed, bool slow) noexcept {
  const auto f = static_cast<std::uint8_t>(failed ? 1 : 0), s = static_cast<std::uint8_t>(slow ? 1 : 0);
  if (ring_) {
    const std::uint64_t i = ring_next_.fetch_add(1, std::memory_order_relaxed) % policy_.window_calls;
    const std::uint8_t old =
        ring_[i].exchange(static_cast<std::uint8_t>(1 | f << 1 | s << 2), std::memory_order_acq_rel);
    if (!(old & 1)) ring_calls_.fetch_add(1, std::memory_order_relaxed);
    if (const int d = f - ((old >> 1) & 1)) ring_failures_.fetch_add(d, std::memory_order_relaxed);
    if (const int d = s - ((old >> 2) & 1)) ring_slows_.fetch_add(d, std::memory_order_relaxed);
    return;
  }
  const std::int64_t epoch = now_() / bucket_ns_;
  Bucket& b = buckets_[epoch % kBuckets];
  std::int64_t seen = b.epoch.load(std::memory_order_acquire);
  if (seen > epoch) return;  // (a clock read before another thread's: its bucket has moved on)
  if (seen < epoch && b.epoch.compare_exchange_strong(seen, epoch, std::memory_order_acq_rel)) {
    b.calls.store(0, std::memory_order_relaxed);
    b.failures.store(0, std::memory_order_relaxed);
    b.slows.store(0, std::memory_order_relaxed);
  }
  b.calls.fetch_add(1, std::memory_order_relaxed);
  if (f) b.failures.fetch_add(1, std::memory_order_relaxed);
  if (s) b.slows.fetch_add(1, std::memory_order_relaxed);
}

CircuitBreakerState::Totals CircuitBreakerState::window_totals() const noexcept {
  Totals t;
  if (ring_) {
    t.calls = static_cast<std::uint64_t>(std::max<std::int64_t>(0, ring_calls_.load(std::memory_order_relaxed)));
    t.failures = static_cast<std::uint64_t>(std::max<std::int64_t>(0, ring_failures_.load(std::memory_order_relaxed)));
    t.slows = static_cast<std::uint64_t>(std::max<std::int64_t>(0, ring_slows_.load(std::memory_order_relaxed)));
    return t;
  }
  const std::int64_t now = now_() / bucket_ns_;
  for (const Bucket& b : buckets_) {
    const std::int64_t e = b.epoch.load(std::memory_order_acquire);
    if (e < 0 || e <= now - kBuckets || e > now) continue;
    t.calls += b.calls.load(std::memory_order_relaxed);
    t.failures += b.failures.load(std::memory_order_relaxed);
    t.slows += b.slows.load(std::memory_order_relaxed);
  }
  return t;
}

void CircuitBreakerState::clear_window() noexcept {
  if (ring_) {
    for (std::uint32_t i = 0; i < policy_.window_calls; ++i) ring_[i].store(0, std::memory_order_relaxed);
    ring_next_.store(0, std::memory_order_relaxed);
    ring_calls_.store(0, std::memory_order_relaxed);
    ring_failures_.store(0, std::memory_order_relaxed);
    ring_slows_.store(0, std::memory_order_relaxed);
  }
  for (Bucket& b : buckets_) {
    b.epoch.store(-1, std::memory_order_relaxed);
    b.calls.store(0, std::memory_order_relaxed);
    b.failures.store(0, std::memory_order_relaxed);
    b.slows.store(0, std::memory_order_relaxed);
  }
}

void CircuitBreakerState::move(std::uint64_t from, CircuitState to) noexcept {
  std::chrono::milliseconds open_for{0};
  {
    Guard g(mutex_);
    if (phase_.load(std::memory_order_relaxed) != from) return;  // another thread moved first
    if (to == CircuitState::open) {
      open_until_ns_.store(now_() + std::chrono::duration_cast<std::chrono::nanoseconds>(policy_.open_for).count(),
                           std::memory_order_release);
      counts_.opened.fetch_add(1, std::memory_order_relaxed);
      open_for = policy_.open_for;
    }
    if (to == CircuitState::closed) clear_window();
    if (to == CircuitState::half_open) half_open_since_ns_ = now_();
    probes_out_ = 0;
    probes_ended_ = {};
    phase_.store(circuit_phase(circuit_phase_generation(from) + 1, to), std::memory_order_release);
  }
  // (the hook runs outside the lock: it may ask the breaker anything)
  switch (to) {
    case CircuitState::open:
      emit_notice(EventKind::circuit_opened, "circuit_breaker", name_,
                  "circuit breaker '" + name_ + "' opened: calls are refused for " +
                      std::to_string(open_for.count()) + " ms");
      break;
    case CircuitState::half_open:
      emit_notice(EventKind::circuit_half_open, "circuit_breaker", name_,
                  "circuit breaker '" + name_ + "' is half-open: it lets probes through (at most " +
                      std::to_string(policy_.half_open_calls) + ")");
      break;
    case CircuitState::closed:
      emit_notice(EventKind::circuit_closed, "circuit_breaker", name_,
                  "circuit breaker '" + name_ + "' closed: its probes passed");
      break;
  }
}

std::chrono::milliseconds CircuitBreakerState::retry_after() const noexcept {
  if (shared_ && shared_->phase() != 0) return shared_->retry_after();
  if (state() != CircuitState::open) return std::chrono::milliseconds(0);
  const std::int64_t left = open_until_ns_.load(std::memory_order_acquire) - now_();
  return std::chrono::milliseconds(left <= 0 ? 0 : (left + 999'999) / 1'000'000);
}

}  // namespace detail

CircuitPass::CircuitPass(CircuitPass&& other) noexcept
    : state_(std::move(other.state_)), phase_(other.phase_), probe_(other.probe_), started_ns_(other.started_ns_) {}

CircuitPass& CircuitPass::operator=(CircuitPass&& other) noexcept {
  if (this != &other) {
    end(0);
    state_ = std::move(other.state_);
    phase_ = other.phase_;
    probe_ = other.probe_;
    started_ns_ = other.started_ns_;
  }
  return *this;
}

CircuitPass::~CircuitPass() { end(0); }

void CircuitPass::succeeded() noexcept { end(1); }
void CircuitPass::failed() noexcept { end(2); }

void CircuitPass::end(int outcome) noexcept {
  if (!state_) return;
  const std::chrono::milliseconds slow_call = state_->policy().slow_call;
  const bool slow = outcome != 0 && slow_call.count() > 0 &&
                    detail::steady_now_ns() - started_ns_ >= std::chrono::duration_cast<std::chrono::nanoseconds>(slow_call).count();
  state_->record({phase_, probe_}, outcome, slow);
  state_.reset();
}

CircuitBreaker::CircuitBreaker(std::string name, const CircuitBreakerPolicy& policy)
    : state_(std::make_shared<detail::CircuitBreakerState>(std::move(name), policy)) {}

CircuitPass CircuitBreaker::try_pass_holding(std::shared_ptr<detail::CircuitBreakerState> held) const {
  CircuitPass pass;
  const detail::CircuitAdmission a = state_->admit();
  if (!a) return pass;
  pass.state_ = std::move(held);
  pass.phase_ = a.phase;
  pass.probe_ = a.probe;
  if (state_->policy().slow_call.count() > 0) pass.started_ns_ = detail::steady_now_ns();
  return pass;
}

CircuitPass CircuitBreaker::try_pass() const { return try_pass_holding(state_); }

CircuitPass CircuitBreaker::try_pass_borrowed() const {
  // (a shared_ptr owning nothing: moved and dropped without a count)
  return try_pass_holding(std::shared_ptr<detail::CircuitBreakerState>(std::shared_ptr<void>(), state_.get()));
}

CircuitPass CircuitBreaker::pass() const {
  CircuitPass p = try_pass();
  if (!p) throw CircuitOpen(name(), retry_after());
  return p;
}

CircuitState CircuitBreaker::state() const noexcept { return state_->state(); }
std::chrono::milliseconds CircuitBreaker::retry_after() const noexcept { return state_->retry_after(); }
const std::string& CircuitBreaker::name() const noexcept { return state_->name(); }
const CircuitBreakerPolicy& CircuitBreaker::policy() const noexcept { return state_->policy(); }

namespace {
// weave_circuit_*: the breakers named through weave::circuit_breaker() or an annotation.
[[maybe_unused]] const bool circuit_metrics_registered = [] {
  detail::register_metrics_source([](detail::MetricsWriter& w) {
    using State = detail::CircuitBreakerState;
    detail::for_each_named_state<State>([&](const std::string& name, const State& s) {
      const auto& c = s.counts();
      auto n = [](const std::atomic<std::uint64_t>& a) { return static_cast<double>(a.load(std::memory_order_relaxed)); };
      w.counter("weave_circuit_calls_total", "Calls through a circuit breaker, by outcome.",
                {{"breaker", name}, {"outcome", "succeeded"}}, n(c.succeeded));
      w.counter("weave_circuit_calls_total", "Calls through a circuit breaker, by outcome.",
                {{"breaker", name}, {"outcome", "failed"}}, n(c.failed));
      w.counter("weave_circuit_calls_total", "Calls through a circuit breaker, by outcome.",
                {{"breaker", name}, {"outcome", "refused"}}, n(c.refused));
      w.counter("weave_circuit_slow_calls_total", "Calls that took slow_call or more.", {{"breaker", name}}, n(c.slow));
      const detail::SharedCircuit* shared = s.shared();
      w.counter("weave_circuit_opened_total", "Times the breaker opened (shared: times this process learned it).",
                {{"breaker", name}}, n(c.opened) + (shared ? static_cast<double>(shared->opened()) : 0));
      if (shared) {
        w.counter("weave_circuit_store_errors_total", "A shared breaker's store failed (its feed included).",
                  {{"breaker", name}}, static_cast<double>(shared->store_errors()));
        w.counter("weave_circuit_local_calls_total",
                  "Calls a shared breaker's local state decided, the store being unreachable.", {{"breaker", name}},
                  n(c.local));
      }
      w.gauge("weave_circuit_state", "0 closed, 1 open, 2 half-open.", {{"breaker", name}},
              static_cast<double>(static_cast<int>(s.state())));
    });
  });
  return true;
}();
}  // namespace

CircuitBreaker circuit_breaker(std::string_view name, const CircuitBreakerPolicy& policy) {
  using State = detail::CircuitBreakerState;
  return CircuitBreaker(detail::named_state<State>(
      name, [&] { return std::make_shared<State>(std::string(name), policy); },
      [&](const State& had) -> std::string {
        if (had.policy() == policy) return "";
        return "circuit breaker '" + std::string(name) +
               "' exists already with another policy (every user of a name must give the same)";
      }));
}

}  // namespace weave
