// Calls kept as JSON for a worker to run later: the documented [[delay]]
// example, parameters of several storable types, a user's annotation that
// stores calls (tests/codegen/vocab/later.json) and an interface's decorator
// (test_stored_call_run.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "weave/lease.h"

namespace shop {

enum class Mode { ground, air };

struct Shipment {
  std::string id;
  int grams = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Shipment, id, grams)

class Orders {
 public:
  virtual ~Orders() = default;

  [[delay(queue="orders", after=30min, retries=5, backoff=10s)]]
  [[lock(key="order:<order_id>")]]
  virtual void cancel_if_unpaid(const std::string& order_id) {
    const weave::Lease* lease = weave::current_lease();
    seen.push_back("cancel " + order_id + " under " + (lease ? lease->key() : std::string("no lock")));
  }

  [[delay]]
  [[audit(event="schedule", subject="<shipment.id>:<this.region>")]]
  virtual void schedule(const Shipment& shipment, int priority, std::vector<std::string> tags,
                        std::optional<long> deadline, Mode mode) {
    std::string t;
    for (const auto& tag : tags) t += tag + ",";
    seen.push_back("schedule " + shipment.id + "/" + std::to_string(shipment.grams) + " p" + std::to_string(priority) +
                   " [" + t + "] " + (deadline ? std::to_string(*deadline) : "none") +
                   (mode == Mode::air ? " air" : " ground") + " in " + region);
  }

  [[later(lane="fast")]]
  virtual void sweep() { seen.push_back("sweep"); }

  std::string region = "eu";
  std::vector<std::string> seen;
};

class Mailer {
 public:
  virtual ~Mailer() = default;
  [[delay(queue="mail")]] virtual void send(const std::string& to, const std::string& text) = 0;
};

}  // namespace shop
