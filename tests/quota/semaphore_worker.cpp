// A process holding permits of one semaphore, driven by test_semaphore.cpp
// through argv, stdin and stdout lines.
//
//   semaphore_worker <url> <key> <permits> <permit lease ms> hold
//     -> "HELD <fencing token>"; then per line read: "check" -> "LOST 0|1",
//        "release" -> "RELEASE 1|0" (0: it had been lost), and exits.
//   semaphore_worker <url> <key> <permits> <permit lease ms> cycle <rounds> <hold ms>
//     -> per round, one line "HELD <from ns> <to ns>" (CLOCK_MONOTONIC, the
//        same clock in every process of the host: the time it held a permit),
//        then "DONE".
//   semaphore_worker <url> <key> <permits> <permit lease ms> chaos <file> <line place ms>
//     -> until killed: takes a permit (waiting), holds it 1-5 ms, gives it
//        back, and appends "<from ns> <to ns> <fencing token> <1|0|?>" to
//        <file> (1: the release found it still held, so it was live
//        throughout; 0: lost; ?: the store did not answer); store errors are
//        waited out (the test restarts Redis under it).
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <thread>

#include "weave/error.h"
#include "weave/quota.h"
#include "weave/semaphore.h"
#include "worker_lines.h"

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: semaphore_worker <url> <key> <permits> <lease ms> hold|cycle ...\n");
    return 2;
  }
  const std::string key = argv[2], mode = argv[5];
  weave::QuotaOptions options{.url = argv[1], .permit_lease = std::chrono::milliseconds(std::atoll(argv[4]))};
  if (mode == "chaos" && argc == 8) options.line_place = std::chrono::milliseconds(std::atoll(argv[7]));
  weave::configure_quota(options);
  weave::Semaphore sem;
  const weave::SemaphoreSpec spec{.permits = static_cast<std::uint32_t>(std::atoi(argv[3])),
                                  .wait = std::chrono::seconds(30)};
  try {
    if (mode == "hold") {
      weave::Permit p = sem.acquire(key, spec);
      say("HELD " + std::to_string(p->fencing_token()));
      for (std::string line; std::getline(std::cin, line);) {
        if (line == "check") say(std::string("LOST ") + (p->lost() ? "1" : "0"));
        if (line == "release") {
          say(std::string("RELEASE ") + (p.release() ? "1" : "0"));
          return 0;
        }
      }
      return 0;
    }
    if (mode == "cycle" && argc == 8) {
      const int rounds = std::atoi(argv[6]);
      const auto hold = std::chrono::milliseconds(std::atoll(argv[7]));
      for (int i = 0; i < rounds; ++i) {
        weave::Permit p = sem.acquire(key, spec);
        const long long from = monotonic_ns();
        std::this_thread::sleep_for(hold);
        const long long to = monotonic_ns();
        const bool kept = !p->lost();
        p.release();
        say("HELD " + std::to_string(from) + " " + std::to_string(to) + (kept ? "" : " LOST"));
      }
      say("DONE");
      return 0;
    }
    if (mode == "chaos" && argc == 8) {
      std::ofstream out(argv[6], std::ios::app);
      std::minstd_rand rnd(static_cast<unsigned>(::getpid()));
      for (;;) {
        try {
          weave::Permit p = sem.acquire(key, spec);
          const long long from = monotonic_ns();
          const std::uint64_t token = p->fencing_token();
          std::this_thread::sleep_for(std::chrono::milliseconds(1 + rnd() % 5));
          const long long to = monotonic_ns();
          std::string kept = "?";
          try {
            kept = p.release() ? "1" : "0";
          } catch (const weave::Error&) {
          }
          out << from << ' ' << to << ' ' << token << ' ' << kept << '\n' << std::flush;
        } catch (const weave::Error&) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));  // (Redis restarting)
        }
      }
    }
  } catch (const weave::Error& e) {
    say(std::string("ERROR ") + e.what());
    return 1;
  }
  std::fprintf(stderr, "semaphore_worker: unknown mode %s\n", mode.c_str());
  return 2;
}
