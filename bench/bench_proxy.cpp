// Direct virtual call vs. proxy with an empty chain vs. proxy with the embedded
// lock (uncontended), in ns per call and as ratios to the direct call.
//   ./bench_proxy [iterations]
#include <cstdio>
#include <cstdlib>

#include "bench_service.weave.h"
#include "bench_util.h"
#include "weave/interceptor.h"

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 200000;
  weave::InterceptorRegistry::global().add("noop", [](weave::Invocation& inv) { inv.proceed(); });

  weave::Woven<Counter> woven;
  Counter& counter = woven;
  Counter plain_object;
  Counter& plain = plain_object;

  const double direct = bench::ns_per_call(n, 5, [&](long i) { bench::keep(plain.plain(i)); });
  const double empty =
      bench::ns_per_call(n, 5, [&](long i) { bench::keep(counter.through_empty_chain(i)); });
  // One key per call would measure key creation; one hot key measures the lock path.
  const double locked =
      bench::ns_per_call(n / 4, 5, [&](long) { bench::keep(counter.through_lock(1)); });

  std::printf("%-34s %10s %10s\n", "call", "ns/call", "x direct");
  std::printf("%-34s %10.1f %10.2f\n", "direct virtual call", direct, 1.0);
  std::printf("%-34s %10.1f %10.2f\n", "proxy, empty chain ([[noop]])", empty, empty / direct);
  std::printf("%-34s %10.1f %10.2f\n", "proxy, embedded lock (mem://)", locked, locked / direct);
  std::printf("%-34s %10.2f\n", "lock / empty chain", locked / empty);
  return 0;
}
