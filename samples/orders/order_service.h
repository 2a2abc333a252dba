// The sample service: two locked methods, one plain one, one locked free function.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace shop {

struct Receipt {
  std::string order_id;
  int cents = 0;
  // The lease the payment ran under, as the method saw it.
  std::string lock_key;
  std::uint64_t fencing_token = 0;
  std::chrono::steady_clock::time_point held_from, held_until;
};

struct Item {
  std::string sku;
  std::string name;
};

class OrderService {
 public:
  virtual ~OrderService() = default;

  // One payment per order at a time: callers queue for up to 5 s; the lease
  // is fixed at 30 s (no renewal).
  [[lock(key="order:<arg0>", ttl=30s, wait=5s)]]
  virtual Receipt pay(const std::string& order_id, int cents);

  // Reservations of one SKU queue up for at most 2 s; the lease is renewed
  // by the watchdog while the method runs.
  [[weave::lock(key="stock:<item.sku>", wait=2s)]]
  virtual void reserve(const Item& item, int qty);

  int balance() const;  // not annotated: passes straight through

 protected:
  std::atomic<int> total_cents_{0};
};

[[lock(key="acct:<from>")]] void transfer(const std::string& from, const std::string& to, int cents);

}  // namespace shop
