// mem:// shared circuit breakers: the records of a table of this process,
// under one lock; the steps of circuit_store.h on steady_clock ms. Every
// store of the same table hears of the changes its steps make, on the
// stepping thread, after the lock.
#include <chrono>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/feature_runtime.h"
#include "core/process.h"
#include "resilience/circuit_store.h"

namespace WEAVE_NAMESPACE::detail {

namespace {

using Handlers = CircuitStore::Handlers;

struct CircuitTable {
  Mutex mutex;
  std::map<std::string, SharedCircuitRecord, std::less<>> records WEAVE_GUARDED_BY(mutex);
  // Every watching store's handlers (a store's entry goes with it).
  Mutex watchers_mutex;
  std::list<std::shared_ptr<const Handlers>> watchers WEAVE_GUARDED_BY(watchers_mutex);
};

class MemCircuits final : public CircuitStore {
 public:
  explicit MemCircuits(std::shared_ptr<CircuitTable> table) : table_(std::move(table)) {}
  ~MemCircuits() override {
    if (!watching_) return;
    Guard g(table_->watchers_mutex);
    table_->watchers.remove(watching_);
  }

  SharedCircuitView report(std::string_view name, const CircuitBreakerPolicy& p, std::uint64_t generation,
                           const CircuitOutcomes& delta) override {
    return step(name, [&](SharedCircuitRecord& r, std::int64_t now) {
      return shared_circuit_report(r, p, generation, delta, now);
    });
  }
  SharedCircuitView probe(std::string_view name, const CircuitBreakerPolicy& p, std::string_view owner,
                          std::chrono::milliseconds lease) override {
    return step(name, [&](SharedCircuitRecord& r, std::int64_t now) {
      return shared_circuit_probe(r, p, owner, lease.count(), now);
    });
  }
  SharedCircuitView probe_end(std::string_view name, const CircuitBreakerPolicy& p, std::uint64_t generation,
                              std::string_view owner, int outcome, bool slow) override {
    return step(name, [&](SharedCircuitRecord& r, std::int64_t now) {
      return shared_circuit_probe_end(r, p, generation, owner, outcome, slow, now);
    });
  }

  void watch(Handlers handlers) override {
    watching_ = std::make_shared<const Handlers>(std::move(handlers));
    Guard g(table_->watchers_mutex);
    table_->watchers.push_back(watching_);
  }
  bool live() const noexcept override { return true; }  // (every change is told before its step returns)

 private:
  template <class Step>
  SharedCircuitView step(std::string_view name, Step&& s) {
    SharedCircuitView v;
    {
      const std::int64_t now = steady_now_ns() / 1'000'000;  // (the store's clock: ms)
      Guard g(table_->mutex);
      auto it = table_->records.find(name);
      if (it == table_->records.end()) it = table_->records.emplace(std::string(name), fresh_shared_circuit(now)).first;
      v = s(it->second, now);
    }
    if (v.changed) {
      std::vector<std::shared_ptr<const Handlers>> told;
      {
        Guard g(table_->watchers_mutex);
        told.assign(table_->watchers.begin(), table_->watchers.end());
      }
      for (const auto& h : told)
        if (h->on_change) h->on_change(name, v);
    }
    return v;
  }

  std::shared_ptr<CircuitTable> table_;
  std::shared_ptr<const Handlers> watching_;
};

}  // namespace

std::shared_ptr<CircuitStore> make_mem_circuits(std::string_view table) {
  return std::make_shared<MemCircuits>(mem_table<CircuitTable>(table, [] { return std::make_shared<CircuitTable>(); }));
}

}  // namespace weave::detail
