#include "order_service.h"

#include <chrono>
#include <thread>

#include "weave/lease.h"

namespace shop {

namespace {
// Who holds the lock right now, as the running method sees its own lease.
std::string lease_description() {
  const weave::Lease* lease = weave::current_lease();
  if (!lease) return "no lease";
  return lease->key() + " fencing=" + std::to_string(lease->fencing_token());
}
}  // namespace

Receipt OrderService::pay(const std::string& order_id, int cents) {
  std::this_thread::sleep_for(std::chrono::milliseconds(40));  // talk to the payment provider
  total_cents_ += cents;
  return Receipt{order_id, cents, lease_description()};
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
