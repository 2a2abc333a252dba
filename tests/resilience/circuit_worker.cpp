// A process with one shared circuit breaker, driven by
// test_shared_circuit_processes.cpp through argv, stdin and stdout lines.
//
//   circuit_worker <url> <breaker name> <open_for ms>
//     -> "READY <state>", then per line read:
//        "fail <n>" / "succeed <n>" -> n calls through the breaker, each
//            failing / succeeding: "CALLS <let through> <refused>"
//        "await <state> <ms>" -> "STATE <state> <CLOCK_MONOTONIC ns>" once
//            the breaker is in it (polled every 100 us), or "TIMEOUT <state>"
//        "hold" -> a pass kept open (a probe when half-open): "HOLDING" or
//            "REFUSED"; "end ok|fail" ends it: "ENDED"
//        "try" -> one succeeding call: "PASSED" or "REFUSED"
// The policy: failure_rate 50 %, window 10 s, min_calls 20, half_open_calls 2.
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include "weave/circuit_breaker.h"
#include "weave/resilience.h"
#include "worker_lines.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: circuit_worker <url> <breaker name> <open_for ms>\n");
    return 2;
  }
  weave::configure_resilience({.url = argv[1]});
  const weave::CircuitBreakerPolicy policy{.failure_rate = 50,
                                           .window = std::chrono::seconds(10),
                                           .min_calls = 20,
                                           .open_for = std::chrono::milliseconds(std::atoll(argv[3])),
                                           .half_open_calls = 2,
                                           .shared = true};
  const weave::CircuitBreaker breaker = weave::circuit_breaker(argv[2], policy);
  say("READY " + std::string(weave::to_string(breaker.state())));
  weave::CircuitPass held;
  for (std::string line; std::getline(std::cin, line);) {
    std::istringstream in(line);
    std::string command, arg;
    long long n = 0;
    in >> command;
    if (command == "fail" || command == "succeed") {
      in >> n;
      long long passed = 0, refused = 0;
      for (long long i = 0; i < n; ++i) {
        weave::CircuitPass p = breaker.try_pass();
        if (!p) {
          ++refused;
          continue;
        }
        ++passed;
        if (command == "fail") p.failed();
        else p.succeeded();
      }
      say("CALLS " + std::to_string(passed) + " " + std::to_string(refused));
    } else if (command == "await") {
      in >> arg >> n;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(n);
      bool seen = false;
      while (!(seen = weave::to_string(breaker.state()) == arg) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      say(seen ? "STATE " + arg + " " + std::to_string(monotonic_ns()) : "TIMEOUT " + arg);
    } else if (command == "hold") {
      held = breaker.try_pass();
      say(held ? "HOLDING" : "REFUSED");
    } else if (command == "end") {
      in >> arg;
      if (arg == "ok") held.succeeded();
      else held.failed();
      say("ENDED");
    } else if (command == "try") {
      weave::CircuitPass p = breaker.try_pass();
      say(p ? "PASSED" : "REFUSED");
      if (p) p.succeeded();
    }
  }
  return 0;
}
