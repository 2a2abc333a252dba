#include "order_service.h"

#include <chrono>
#include <thread>

#include "weave/lease.h"

namespace shop {

Receipt OrderService::pay(const std::string& order_id, int cents) {
  Receipt r;
  r.order_id = order_id;
  r.cents = cents;
  // The running method can see its own lease: key, fencing token, stop_token.
  if (const weave::Lease* lease = weave::current_lease()) {
    r.lock_key = lease->key();
    r.fencing_token = lease->fencing_token();
    r.held_from = lease->acquired_at();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(40));  // talk to the payment provider
  total_cents_ += cents;
  r.held_until = std::chrono::steady_clock::now();
  return r;
}

void OrderService::reserve(const Item& item, int qty) {
  (void)item;
  (void)qty;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

int OrderService::balance() const { return total_cents_; }

void transfer(const std::string& from, const std::string& to, int cents) {
  (void)from;
  (void)to;
  (void)cents;
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

}  // namespace shop
