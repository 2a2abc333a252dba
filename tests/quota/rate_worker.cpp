// A process that takes permits of one rate-limited key for a while, as fast
// as it can, and says how many it got: the suite runs several at once,
// under clocks skewed by faketime, against one Redis store.
//
//   rate_worker <store url> <key> <permits> <per ms> <burst> <run ms> try|wait
//   -> "admitted <n> refused <m>"
// try: try_acquire(); wait: acquire() with a 200 ms wait (sleeping until
// each turn). Its own run time is measured on the monotonic clock, which
// faketime leaves alone (FAKETIME_DONT_FAKE_MONOTONIC=1).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "weave/error.h"
#include "weave/quota.h"
#include "weave/rate_limit.h"

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr, "usage: rate_worker <url> <key> <permits> <per ms> <burst> <run ms> try|wait\n");
    return 2;
  }
  weave::configure_quota({.url = argv[1]});
  weave::RateLimiter limits;
  const std::string key = argv[2];
  const weave::RateLimit limit{.permits = std::strtoull(argv[3], nullptr, 10),
                               .per = std::chrono::milliseconds(std::strtoll(argv[4], nullptr, 10)),
                               .burst = std::strtoull(argv[5], nullptr, 10)};
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::strtoll(argv[6], nullptr, 10));
  const bool wait = std::string(argv[7]) == "wait";
  long admitted = 0, refused = 0;
  try {
    while (std::chrono::steady_clock::now() < until) {
      if (!wait) {
        (limits.try_acquire(key, limit).admitted ? admitted : refused) += 1;
        continue;
      }
      try {
        limits.acquire(key, limit, std::chrono::milliseconds(200));
        ++admitted;
      } catch (const weave::RateLimited&) {
        ++refused;
      }
    }
  } catch (const std::exception& e) {
    std::printf("error %s\n", e.what());
    return 1;
  }
  std::printf("admitted %ld refused %ld\n", admitted, refused);
  return 0;
}
