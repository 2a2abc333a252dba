// A woven service for the metrics workload (metrics_workload.cpp): one
// method per feature, each with a key template the metrics label by.
#pragma once

#include <optional>
#include <string>

namespace metricstest {

class Shop {
 public:
  virtual ~Shop() = default;

  [[lock(key="acct:<id>", ttl=5s, wait=0s)]]
  virtual int bump([[maybe_unused]] const std::string& id) { return ++bumps; }

  [[cache(name="price", key="<sku>", ttl=10min)]]
  virtual int price(const std::string& sku) {
    ++loads;
    return static_cast<int>(sku.size());
  }

  [[dedupe(key="pay:<order>", window=1min, on_duplicate=replay)]]
  virtual int pay(const std::string& order) {
    ++payments;
    return static_cast<int>(order.size()) * 10;
  }

  // One an hour per user, the second call skipped.
  [[rate_limit(key="api:<user>", rate=1/h, on_limit=skip)]]
  virtual std::optional<int> quote([[maybe_unused]] const std::string& user) { return ++quotes; }

  // One at a time per report, not waiting: a call meeting a held permit is skipped.
  [[semaphore(key="report:<name>", permits=1, on_busy=skip)]]
  virtual std::optional<int> report([[maybe_unused]] const std::string& name) { return ++reports; }

  int bumps = 0, loads = 0, payments = 0, quotes = 0, reports = 0;
};

}  // namespace metricstest
