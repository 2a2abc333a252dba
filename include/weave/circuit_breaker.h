// weave/circuit_breaker.h — stop calling a dependency that keeps failing,
// for a while, then let a few calls find out whether it is back.
//
//   weave::CircuitBreaker psp = weave::circuit_breaker("psp", {.failure_rate = 50, .min_calls = 20});
//   Receipt r = psp.call([&] { return charge(order, cents); });   // weave::CircuitOpen while open
//
// [[circuit_breaker(name="psp", failure_rate=50%, min_calls=20, window=30s, open_for=10s)]]
// does the same around a method.
//
// Closed, it lets every call through and keeps their outcomes in a window
// (the last `window_calls` calls, or those of the last `window`). A failure
// (every exception the call throws) or a slow call (one that took at least
// `slow_call`) that brings the window to at least `min_calls` calls with
// `failure_rate` % failed or `slow_call_rate` % slow opens it: for
// `open_for` every call is refused at once with weave::CircuitOpen. Then it
// is half-open: `half_open_calls` calls go through as probes (others are
// refused); once they all ended, it closes unless they reached a threshold
// themselves, which opens it again (as do probes still out after another
// `open_for`). Each change of state starts an empty
// window, and outcomes of calls let through before it are not counted.
// State changes are events (weave/event.h) and metrics (weave_circuit_*).
// Thread-safe.
//
// `shared = true` makes it one breaker for the whole deployment: every
// process reports its outcomes to the resilience store (weave/resilience.h)
// within `flush_interval`, the store opens it on the fleet's totals and
// tells every process at once, and `half_open_calls` counts probes across
// the fleet. A closed call still costs no round trip; while the store is
// unreachable each process falls back on its own local breaker.
#pragma once

#include "weave/abi.h"

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include "weave/error.h"

namespace WEAVE_NAMESPACE {

struct CircuitBreakerPolicy {
  int failure_rate = 50;  // %, 1 to 100: failed calls in the window that open it
  // A call that takes at least this long is slow; 0: calls are never slow.
  std::chrono::milliseconds slow_call{0};
  int slow_call_rate = 100;  // %, 1 to 100: slow calls in the window that open it
  // The window: the last `window_calls` calls when > 0, else the calls of
  // the last `window` (10 buckets of a tenth each; at least 100 ms).
  std::uint32_t window_calls = 0;
  std::chrono::milliseconds window{60'000};
  std::uint32_t min_calls = 20;  // calls the window needs before it can open
  std::chrono::milliseconds open_for{30'000};
  std::uint32_t half_open_calls = 5;  // probes let through when half-open
  // One breaker for every process of the deployment: its window adds up
  // their outcomes and its state lives in the resilience store
  // (weave/resilience.h). Needs the time-based window.
  bool shared = false;

  bool operator==(const CircuitBreakerPolicy&) const = default;
};

// Throws UsageError for a value out of range.
WEAVE_API void check_circuit_breaker_policy(const CircuitBreakerPolicy& p);

enum class CircuitState : std::uint8_t { closed, open, half_open };
WEAVE_API std::string_view to_string(CircuitState s) noexcept;

namespace detail {
class CircuitBreakerState;
}  // namespace detail

// Leave for one call through a breaker (CircuitBreaker::try_pass); empty
// when refused. Say how the call ended with succeeded() or failed(); one
// destroyed without either (a cancelled call) counts for nothing and gives
// a probe's place back. Move-only; not thread-safe itself.
class WEAVE_API CircuitPass {
 public:
  CircuitPass() noexcept = default;
  CircuitPass(CircuitPass&& other) noexcept;
  CircuitPass& operator=(CircuitPass&& other) noexcept;
  ~CircuitPass();

  explicit operator bool() const noexcept { return state_ != nullptr; }
  // The call returned: slow when it took slow_call or more since the pass.
  void succeeded() noexcept;
  // The call failed.
  void failed() noexcept;

 private:
  friend class CircuitBreaker;
  void end(int outcome) noexcept;  // 0: nothing, 1: succeeded, 2: failed
  std::shared_ptr<detail::CircuitBreakerState> state_;
  std::uint64_t phase_ = 0;  // the state and generation it was let through in
  std::uint64_t probe_ = 0;  // a shared breaker's probe: its number
  std::int64_t started_ns_ = 0;
};

class WEAVE_API CircuitBreaker {
 public:
  // This breaker's own (weave::circuit_breaker() shares one by name).
  // Throws UsageError for an empty name or a policy out of range.
  CircuitBreaker(std::string name, const CircuitBreakerPolicy& policy = {});

  // A pass, or an empty one when it refuses (open, or half-open with every
  // probe out).
  CircuitPass try_pass() const;
  // The same; refused throws weave::CircuitOpen.
  CircuitPass pass() const;
  // f() through the breaker: CircuitOpen when refused; else f's result, or
  // its exception (a failure) passed on.
  template <class F>
  auto call(F&& f) const -> std::invoke_result_t<F&> {
    CircuitPass p = pass();
    if constexpr (std::is_void_v<std::invoke_result_t<F&>>) {
      try {
        f();
      } catch (...) {
        p.failed();
        throw;
      }
      p.succeeded();
    } else {
      std::invoke_result_t<F&> r = [&]() -> std::invoke_result_t<F&> {
        try {
          return f();
        } catch (...) {
          p.failed();
          throw;
        }
      }();
      p.succeeded();
      return r;
    }
  }

  CircuitState state() const noexcept;
  // Until an open breaker lets a probe through (0 unless open).
  std::chrono::milliseconds retry_after() const noexcept;
  const std::string& name() const noexcept;
  const CircuitBreakerPolicy& policy() const noexcept;

  // For the interceptors (src/resilience/).
  const std::shared_ptr<detail::CircuitBreakerState>& state_ptr() const noexcept { return state_; }
  // try_pass() whose pass borrows this breaker's state instead of sharing
  // it (no reference count, two atomic operations fewer): the pass must end
  // while this CircuitBreaker lives, as an interceptor's does within its call.
  CircuitPass try_pass_borrowed() const;
  explicit CircuitBreaker(std::shared_ptr<detail::CircuitBreakerState> state) noexcept : state_(std::move(state)) {}

 private:
  // try_pass(), the pass holding `held` (this state, shared or borrowed).
  CircuitPass try_pass_holding(std::shared_ptr<detail::CircuitBreakerState> held) const;
  std::shared_ptr<detail::CircuitBreakerState> state_;
};

// The process-wide breaker called `name` (made with `policy` on first use):
// every caller and every [[circuit_breaker(name=...)]] method naming it
// shares it. Throws UsageError when it exists with another policy.
WEAVE_API CircuitBreaker circuit_breaker(std::string_view name, const CircuitBreakerPolicy& policy = {});

}  // namespace weave
