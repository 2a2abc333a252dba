// The process-wide state of shared circuit breakers: the options, the store
// for their URL, this runtime's shared breakers by name, and the flusher
// thread that reports their counts. A breaker made under it keeps it.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/feature_runtime.h"
#include "core/process.h"
#include "resilience/circuit_store.h"
#include "resilience/shared_circuit.h"
#include "weave/resilience.h"

namespace WEAVE_NAMESPACE::detail {

class ResilienceRuntime {
 public:
  explicit ResilienceRuntime(ResilienceOptions options);
  ~ResilienceRuntime();
  ResilienceRuntime(const ResilienceRuntime&) = delete;
  ResilienceRuntime& operator=(const ResilienceRuntime&) = delete;

  const ResilienceOptions& options() const noexcept { return options_; }
  CircuitStore& circuits() noexcept { return *store_; }
  // The shared breaker `name` of this runtime, made on first use (its
  // record is then asked for at once, so a breaker open in the fleet
  // refuses from the first call). Throws UsageError when it exists with
  // another policy.
  SharedCircuit& shared_circuit(std::string_view name, const CircuitBreakerPolicy& policy);

 private:
  // The breakers, reached from the store's feed thread too (so held apart
  // from the runtime: they never end before the feed's handlers).
  struct Circuits {
    Mutex mutex;
    std::map<std::string, std::unique_ptr<SharedCircuit>, std::less<>> by_name WEAVE_GUARDED_BY(mutex);
    // f(breaker) for each, outside the lock (a breaker lives as long as
    // this: f may take a round trip).
    template <class F>
    void each(F&& f) {
      std::vector<SharedCircuit*> all;
      {
        Guard g(mutex);
        for (auto& [_, c] : by_name) all.push_back(c.get());
      }
      for (SharedCircuit* c : all) f(*c);
    }
    SharedCircuit* find(std::string_view name) {
      Guard g(mutex);
      auto it = by_name.find(name);
      return it == by_name.end() ? nullptr : it->second.get();
    }
  };
  void flush_loop();

  ResilienceOptions options_;
  std::string owner_prefix_;
  std::shared_ptr<Circuits> circuits_ = std::make_shared<Circuits>();
  Mutex mutex_;
  std::condition_variable cv_;
  bool stop_ WEAVE_GUARDED_BY(mutex_) = false;
  bool started_ WEAVE_GUARDED_BY(mutex_) = false;
  OwnedThread flusher_;
  std::shared_ptr<CircuitStore> store_;  // last: its feed stops first
};

using ResilienceRuntimeSlot = RuntimeSlot<ResilienceRuntime, ResilienceOptions>;
ResilienceRuntimeSlot& resilience_runtime_slot();

// Binds a store URL scheme to a shared breakers' store (mem is built in;
// the Redis schemes register when Weave::resilience_redis is linked).
using CircuitStoreFactory = std::function<std::shared_ptr<CircuitStore>(const ResilienceOptions&)>;
void register_circuit_store(std::string scheme, CircuitStoreFactory factory);
// The store `o.url` names (ConfigError for a scheme no linked library serves).
std::shared_ptr<CircuitStore> open_circuit_store(const ResilienceOptions& o);

}  // namespace weave::detail
