// Several threads pay through the woven OrderService: payments of one order run
// one at a time, payments of different orders run in parallel. Each line shows
// when a call held its key (ms since start) and the lease it saw.
//
//   WEAVE_LOCK_URL=mem:// ./orders        (the default: embedded backend)
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "order_service.weave.h"

namespace {
using Clock = std::chrono::steady_clock;
const Clock::time_point t0 = Clock::now();
std::mutex print_mutex;

long ms_since_start() {
  return static_cast<long>(
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count());
}

void pay_and_report(shop::OrderService& svc, int worker, const std::string& order) {
  const long start = ms_since_start();
  shop::Receipt r = svc.pay(order, 100);  // through the proxy: locks order:<order>
  const long end = ms_since_start();
  std::lock_guard lock(print_mutex);
  std::printf("worker %d  paid %-4s  returned at %4ld ms (called at %3ld ms)  lease: %s\n", worker,
              order.c_str(), end, start, r.holder.c_str());
}
}  // namespace

int main() {
  // The proxy replaces the service where it is created; callers keep using
  // OrderService& (pay and reserve are virtual, so they stay locked).
  auto svc = std::make_shared<weave::Woven<shop::OrderService>>();
  std::shared_ptr<shop::OrderService> service = svc;

  std::printf("4 workers pay order o-1 (serialised), then 4 workers pay o-1..o-4 (parallel)\n");
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w)
    workers.emplace_back([&, w] { pay_and_report(*service, w, "o-1"); });
  for (auto& t : workers) t.join();
  workers.clear();

  const long parallel_start = ms_since_start();
  for (int w = 0; w < 4; ++w)
    workers.emplace_back([&, w] { pay_and_report(*service, w, "o-" + std::to_string(w + 1)); });
  for (auto& t : workers) t.join();
  std::printf("different orders took %ld ms in all (one payment takes ~40 ms)\n",
              ms_since_start() - parallel_start);

  service->reserve(shop::Item{"sku-7", "lamp"}, 1);
  shop::woven::transfer("alice", "bob", 500);  // the woven entry point of a free function
  std::printf("balance: %d cents\n", service->balance());
  return 0;
}
