// Shared circuit breakers on Redis (redis://, redis+cluster://,
// redis+sentinel://): one script call per step (scripts/circuit_*.lua) on
// the breaker's record "{<prefix>cb:<name>}" (one slot), and one feed of
// their changes for the process, the broadcast channel "{<prefix>cb}".
#include <memory>
#include <string>

#include "resilience/circuit_store.h"
#include "resilience/resilience_runtime.h"
#include "resilience/scripts.h"
#include "store/feed_keeper.h"
#include "store/open.h"
#include "store/reply.h"

namespace WEAVE_NAMESPACE::detail {

extern "C" const char weave_link_resilience_redis = 0;

namespace {

// The policy as the scripts' first arguments (_circuit.lua).
struct PolicyArgs {
  explicit PolicyArgs(const CircuitBreakerPolicy& p)
      : window(p.window.count()),
        failure_rate(p.failure_rate),
        slow_call(p.slow_call.count()),
        slow_call_rate(p.slow_call_rate),
        min_calls(p.min_calls),
        open_for(p.open_for.count()),
        half_open_calls(p.half_open_calls) {}
  void add_to(std::vector<std::string_view>& args) const {
    for (const store::NumberArg* a : {&window, &failure_rate, &slow_call, &slow_call_rate, &min_calls, &open_for,
                                      &half_open_calls})
      args.push_back(a->view());
  }
  store::NumberArg window, failure_rate, slow_call, slow_call_rate, min_calls, open_for, half_open_calls;
};

class RedisCircuits final : public CircuitStore {
 public:
  RedisCircuits(std::shared_ptr<store::Executor> exec, const ResilienceOptions& o)
      : exec_(std::move(exec)), prefix_(o.key_prefix), channel_("{" + o.key_prefix + "cb}"), feed_(exec_, channel_, o.feed_lag) {}

  SharedCircuitView report(std::string_view name, const CircuitBreakerPolicy& p, std::uint64_t generation,
                           const CircuitOutcomes& delta) override {
    const store::NumberArg gen(generation), calls(delta.calls), failures(delta.failures), slows(delta.slows);
    return step(resilience_redis::scripts::circuit_report, name, p, {gen.view(), calls.view(), failures.view(), slows.view()});
  }
  SharedCircuitView probe(std::string_view name, const CircuitBreakerPolicy& p, std::string_view owner,
                          std::chrono::milliseconds lease) override {
    const store::NumberArg ms(lease.count());
    return step(resilience_redis::scripts::circuit_probe, name, p, {owner, ms.view()});
  }
  SharedCircuitView probe_end(std::string_view name, const CircuitBreakerPolicy& p, std::uint64_t generation,
                              std::string_view owner, int outcome, bool slow) override {
    const store::NumberArg gen(generation), how(outcome);
    return step(resilience_redis::scripts::circuit_probe_end, name, p,
                {gen.view(), owner, how.view(), slow ? "1" : "0"});
  }

  void watch(Handlers handlers) override {
    handlers_ = std::move(handlers);
    feed_.start({.on_message =
                     [this](std::string_view payload) {
                       if (auto c = decode_circuit_change(payload)) handlers_.on_change(c->name, c->view);
                     },
                 .on_down = [this] { if (handlers_.on_down) handlers_.on_down(); },
                 .on_up = [this] { if (handlers_.on_up) handlers_.on_up(); }});
  }
  bool live() const noexcept override { return feed_.live(std::chrono::steady_clock::now()); }

 private:
  SharedCircuitView step(const char* script, std::string_view name, const CircuitBreakerPolicy& p,
                         std::initializer_list<std::string_view> step_args) {
    std::string key;
    key.reserve(prefix_.size() + name.size() + 5);
    key.append("{").append(prefix_).append("cb:").append(name).append("}");
    std::vector<std::string_view> args;
    args.reserve(9 + step_args.size());
    const PolicyArgs policy(p);
    policy.add_to(args);
    args.push_back(channel_);
    args.push_back(name);
    args.insert(args.end(), step_args);
    const store::Reply reply = store::run_one(*exec_, {script, {key}, std::move(args)}, "circuit breaker");
    const store::ReplyView r(reply, "circuit breaker");
    SharedCircuitView v;
    const long long state = r[0].integer();
    if (state < 0 || state > 2)
      throw ReplyError("circuit breaker '" + std::string(name) + "'", "ERR the store answered state " + std::to_string(state));
    v.state = static_cast<CircuitState>(state);
    v.generation = static_cast<std::uint64_t>(r[1].integer());
    v.retry_after_ms = r[2].integer();
    v.granted = r[3].integer() == 1;
    v.changed = r[4].integer() == 1;
    return v;
  }

  std::shared_ptr<store::Executor> exec_;
  std::string prefix_, channel_;
  Handlers handlers_;  // set by watch() before the feed calls them
  store::FeedKeeper feed_;  // last: stopped, and its handlers silenced, before the rest goes
};

}  // namespace

std::shared_ptr<CircuitStore> make_redis_circuits(const ResilienceOptions& o) {
  return std::make_shared<RedisCircuits>(store::open_executor(o.url, store::connection_settings(o)), o);
}

namespace {
[[maybe_unused]] const bool resilience_redis_registered = [] {
  for (const char* scheme : store::executor_schemes) register_circuit_store(scheme, make_redis_circuits);
  return true;
}();
}  // namespace

}  // namespace weave::detail
