// resilience/resilience_runtime.h and weave/resilience.h: the options, the
// store, the shared breakers of a runtime and their flusher.
#include "resilience/resilience_runtime.h"

#include <utility>

#include "core/feature_config.h"
#include "core/option_check.h"
#include "core/unique_token.h"

namespace WEAVE_NAMESPACE {

namespace detail {
namespace {
StoreSchemes<CircuitStoreFactory>& schemes() { return feature_schemes<CircuitStoreFactory>("resilience"); }
}  // namespace

ResilienceRuntimeSlot& resilience_runtime_slot() { return never_freed<ResilienceRuntimeSlot>(); }

void register_circuit_store(std::string scheme, CircuitStoreFactory factory) {
  schemes().add(std::move(scheme), std::move(factory));
}

std::shared_ptr<CircuitStore> open_circuit_store(const ResilienceOptions& o) {
  return schemes().open(o, make_mem_circuits);
}

ResilienceRuntime::ResilienceRuntime(ResilienceOptions options)
    : options_(std::move(options)), owner_prefix_(unique_token() + ":") {
  options_.validate();
  store_ = open_circuit_store(options_);
}

ResilienceRuntime::~ResilienceRuntime() {
  {
    Guard g(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  flusher_.join();
}

SharedCircuit& ResilienceRuntime::shared_circuit(std::string_view name, const CircuitBreakerPolicy& policy) {
  {
    Guard g(mutex_);
    if (!started_) {
      started_ = true;
      // The feed's handlers hold the breakers, never the runtime.
      store_->watch({.on_change =
                         [circuits = circuits_](std::string_view changed, const SharedCircuitView& v) {
                           if (SharedCircuit* c = circuits->find(changed)) c->learn(v);
                         },
                     .on_down = [circuits = circuits_] { circuits->each([](SharedCircuit& c) { c.lost(); }); },
                     .on_up = {}});  // (the flusher's next report learns the state)
      flusher_ = OwnedThread("weave-circuits", [this] { flush_loop(); });
    }
  }
  SharedCircuit* made = nullptr;
  {
    Guard g(circuits_->mutex);
    auto it = circuits_->by_name.find(name);
    if (it != circuits_->by_name.end()) {
      if (!(it->second->policy() == policy))
        throw UsageError("shared circuit breaker '" + std::string(name) +
                         "' exists already with another policy (every user of a name must give the same)");
      return *it->second;
    }
    auto c = std::make_unique<SharedCircuit>(std::string(name), policy, owner_prefix_, options_.on_event);
    made = c.get();
    circuits_->by_name.emplace(std::string(name), std::move(c));
  }
  made->flush(*store_);  // (learns the fleet's state now: an open breaker refuses from the first call)
  return *made;
}

void ResilienceRuntime::flush_loop() {
  for (;;) {
    {
      Guard g(mutex_);
      mutex_.wait_for(cv_, options_.flush_interval, [&]() WEAVE_REQUIRES(mutex_) { return stop_; });
      if (stop_) return;
    }
    circuits_->each([&](SharedCircuit& c) { c.flush(*store_); });
  }
}

}  // namespace detail

void ResilienceOptions::validate() const {
  const detail::OptionCheck check("ResilienceOptions");
  check.store_settings(url, connect_timeout, command_timeout, pool_size, key_prefix);
  check.duration("flush_interval", flush_interval, std::chrono::milliseconds(1));
  check.duration("feed_lag", feed_lag, std::chrono::milliseconds(2));
  detail::schemes().check(url);  // an unknown scheme fails here, not at the first call
}

void configure_resilience(ResilienceOptions options) {
  options.validate();
  detail::resilience_runtime_slot().configure(std::move(options));
}

namespace {
[[maybe_unused]] const bool resilience_config_registered = [] {
  using detail::option;
  using O = ResilienceOptions;
  detail::register_feature_config(detail::describe(
      detail::with_store_options<O>({option("flush_interval", &O::flush_interval), option("feed_lag", &O::feed_lag)}),
      &configure_resilience));
  return true;
}();
}  // namespace

}  // namespace weave
