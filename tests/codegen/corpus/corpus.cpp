// The real (un-woven) implementations of corpus.h.
#include "corpus.h"

namespace corpus::shop {

std::string Service::pay(const std::string& order_id, int cents) {
  Calls::log().push_back("pay " + order_id + " " + std::to_string(cents));
  return "paid:" + order_id;
}
int Service::put(int x) { return x + 1; }
void Service::peek(int n, const std::string& who) const noexcept {
  Calls::log().push_back("peek " + std::to_string(n) + " " + who);
}
int Service::ship(const Order& order) { return order.lines(); }
int Service::by_pointer(const Order* ptr, std::shared_ptr<Order> sp) {
  return static_cast<int>(ptr->number.size() + sp->number.size());
}
std::size_t Service::take(std::unique_ptr<std::string> owned, std::string&& moved) {
  std::string m = std::move(moved);
  Calls::log().push_back("take " + *owned + " " + m);
  return owned->size() + m.size();
}
std::string& Service::tag() { return tag_; }
std::optional<int> Service::maybe(int k) { return k * 10; }
int Service::with_fallback(int k) { return k; }
int Service::twice(int a) { return 2 * a; }
void Service::unnamed(int, Tier) { Calls::log().push_back("unnamed"); }
void Service::money(Money m, const Account&) { Calls::log().push_back("money " + std::to_string(m.cents)); }
void Service::refund(const std::string& who) { Calls::log().push_back("refund " + who); }
void Service::multi(int x, int y) { Calls::log().push_back("multi " + std::to_string(x + y)); }
int Service::outer_call() { return inner_call() + 1; }
int Service::inner_call() { return 10; }
int Service::guarded(int v) { return v * 3; }

Outer::Kind Outer::Inner::classify(Kind, int size) { return size > 10 ? Kind::large : Kind::small; }
int Outer::Inner::sized(int size, Speed s, int extra) { return size * 100 + static_cast<int>(s) * 10 + extra; }

int transfer(const std::string& from, const std::string& to, int cents) {
  Calls::log().push_back("transfer " + from + "->" + to + " " + std::to_string(cents));
  return cents;
}
void free_void() { Calls::log().push_back("free_void"); }

long MemoryLedger::credit(const std::string& account, long cents) {
  entries.emplace_back(account, cents);
  return balance(account);
}
long MemoryLedger::balance(const std::string& account) const {
  long sum = 0;
  for (const auto& [a, c] : entries)
    if (a == account) sum += c;
  return sum;
}
int Regional::route(int id) { return id + 1; }

}  // namespace corpus::shop
