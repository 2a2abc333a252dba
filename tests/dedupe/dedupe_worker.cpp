// A separate process calling one [[dedupe]]-guarded method, driven by
// test_dedupe_processes.cpp through argv, stdin and stdout lines.
//
//   dedupe_worker <store url> <key> [--threads M] [--log FILE] [--sleep-ms N]
//                 [--lease-ms L] [--window-ms W] [--wait-ms T]
//                 [--on-duplicate throw|replay] [--go] [--until-lost token|poll]
//
// The guarded method is shop::Payments::pay's shape (dedupe_methods.h: a
// shop::Receipt stored as JSON), its [[dedupe]] written here from the
// options (default window 60 s, on_duplicate=throw, wait 0). M threads call
// it with <key> at once. The body (one execution) appends one line
// "<CLOCK_MONOTONIC ns> <pid> <thread> <result id>" to FILE (O_APPEND, one
// write), prints "RUNNING <result id>", then sleeps N ms. DedupeOptions::
// claim_lease is L ms (default 10 s).
//
// With --until-lost, the body instead runs until its claim is lost (at most N
// ms), looking every 5 ms: `token` at the std::stop_token it took from
// weave::current_dedupe_claim() when it started (fired by the renewer),
// `poll` at the claim's lost() (its own deadline check). Then it prints
// "LOST <id> ..." (or "NOT-LOST <id>" after N ms) and returns its result.
//
// Lines printed:
//   READY                       configured; with --go, waits for a line on stdin, then all threads call
//   RUNNING <id>                the body started (SIGKILL / SIGSTOP the process now to catch it mid-call)
//   LOST <id> token=<0|1> lost=<0|1> fresh_token=<0|1> cause=<text>
//                               --until-lost: the body saw its claim lost (the token it kept, lost(), a
//                               stop_token() asked for now); NOT-LOST <id> when it did not within N ms
//   GOT <thread> <id>           the call returned this result id (its own, or a replayed one)
//   ERR <thread> <type> <what>  DuplicateCall, DuplicateInFlight, DedupeMismatch, or other
//   EVENT <kind> <cause>        DedupeOptions::on_event
//   STATS first_calls=.. duplicates=.. replays=.. waited=.. in_flight_refused=.. claims_lost=.. errors=..
//   DONE
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dedupe_methods.h"
#include "weave/dedupe.h"
#include "weave/error.h"
#include "worker_lines.h"

using std::chrono::milliseconds;

namespace {

struct Options {
  std::string url, key, log;
  int threads = 1;
  milliseconds sleep{0}, lease{10'000}, window{60'000}, wait{0};
  bool replay = false, go = false;
  std::string until_lost;  // "", "token" or "poll"
};

// The [[dedupe]] annotation of the guarded method, built from the options
// (the shape weavegen emits: key = template slot 0, match = slot 1).
const weave::MethodInfo& guarded(const Options& o) {
  using weave::ArgValue;
  static std::vector<weave::ArgSpec> args;
  static std::vector<weave::AnnotationSpec> spec;
  static weave::MethodInfo info;
  args = {{"key", ArgValue::of_template(0)},
          {"match", ArgValue::of_template(1)},
          {"window", ArgValue::of_duration_ms(o.window.count())},
          {"wait", ArgValue::of_duration_ms(o.wait.count())}};
  if (o.replay) args.push_back({"on_duplicate", ArgValue::of_enum("replay", 2)});
  else args.push_back({"message", ArgValue::of_text("already submitted")});
  spec = {{"dedupe", 0, args, 1, 1}};
  info = {"shop::Payments::pay", "payments.h", 1, spec, {}, &dedupe_test::k_receipt_codec};
  return info;
}

std::string error_line(int t, const char* type, const std::exception& e) {
  return "ERR " + std::to_string(t) + " " + type + " " + e.what();
}

int run(const Options& o) {
  weave::DedupeOptions d;
  d.url = o.url;
  d.claim_lease = o.lease;
  d.on_event = [](const weave::Event& e) {
    say("EVENT " + std::string(weave::to_string(e.kind)) + " " + std::string(e.cause));
  };
  weave::configure_dedupe(d);
  const weave::MethodInfo& info = guarded(o);
  const int log = o.log.empty() ? -1 : ::open(o.log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (!o.log.empty() && log < 0) throw std::runtime_error("cannot open " + o.log);

  say("READY");
  if (o.go) {
    std::string line;
    std::getline(std::cin, line);
  }
  std::mutex m;
  std::condition_variable cv;
  int arrived = 0;
  std::vector<std::thread> ts;
  for (int t = 0; t < o.threads; ++t)
    ts.emplace_back([&, t] {
      {  // all threads call at once
        std::unique_lock g(m);
        if (++arrived == o.threads) cv.notify_all();
        cv.wait(g, [&] { return arrived == o.threads; });
      }
      const std::string rendered[2] = {o.key, ""};
      try {
        const shop::Receipt r = weave::detail::invoke<shop::Receipt>(
            info, {}, rendered,
            [&] {
              const std::string id = "r-" + std::to_string(::getpid()) + "-" + std::to_string(t);
              if (log >= 0) {
                const std::string line = std::to_string(monotonic_ns()) + " " + std::to_string(::getpid()) + " " +
                                         std::to_string(t) + " " + id + "\n";
                [[maybe_unused]] auto n = ::write(log, line.data(), line.size());
              }
              say("RUNNING " + id);
              if (o.until_lost.empty()) {
                std::this_thread::sleep_for(o.sleep);
                return shop::Receipt{id, 100};
              }
              const weave::DedupeClaim* claim = weave::current_dedupe_claim();
              if (!claim || claim != weave::current_dedupe_claim(o.key)) {
                say("NO-CLAIM " + id);
                return shop::Receipt{id, 100};
              }
              const std::stop_token kept = claim->stop_token();
              const auto until = std::chrono::steady_clock::now() + o.sleep;
              bool seen = false;
              while (!seen && std::chrono::steady_clock::now() < until) {
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
                seen = o.until_lost == "token" ? kept.stop_requested() : claim->lost();
              }
              if (!seen) {
                say("NOT-LOST " + id);
              } else {
                const bool token = kept.stop_requested(), lost = claim->lost();
                const bool fresh = claim->stop_token().stop_requested();
                say("LOST " + id + " token=" + std::to_string(token) + " lost=" + std::to_string(lost) +
                    " fresh_token=" + std::to_string(fresh) + " cause=" + claim->lost_cause());
              }
              return shop::Receipt{id, 100};
            },
            weave::detail::CannotSkip{});
        say("GOT " + std::to_string(t) + " " + r.id);
      } catch (const weave::DuplicateInFlight& e) {
        say(error_line(t, "DuplicateInFlight", e));
      } catch (const weave::DuplicateCall& e) {
        say(error_line(t, "DuplicateCall", e));
      } catch (const weave::DedupeMismatch& e) {
        say(error_line(t, "DedupeMismatch", e));
      } catch (const std::exception& e) {
        say(error_line(t, "other", e));
      }
    });
  for (auto& t : ts) t.join();
  if (log >= 0) ::close(log);
  const weave::DedupeStats s = weave::dedupe_stats();
  say("STATS first_calls=" + std::to_string(s.first_calls) + " duplicates=" + std::to_string(s.duplicates) +
      " replays=" + std::to_string(s.replays) + " waited=" + std::to_string(s.waited) +
      " in_flight_refused=" + std::to_string(s.in_flight_refused) + " claims_lost=" + std::to_string(s.claims_lost) +
      " errors=" + std::to_string(s.errors));
  say("DONE");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: dedupe_worker <url> <key> [--threads M] [--log FILE] [--sleep-ms N] [--lease-ms L] "
                 "[--window-ms W] [--wait-ms T] [--on-duplicate throw|replay] [--go] [--until-lost token|poll]\n";
    return 2;
  }
  Options o;
  o.url = argv[1];
  o.key = argv[2];
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "dedupe_worker: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--threads") o.threads = std::stoi(value());
    else if (a == "--log") o.log = value();
    else if (a == "--sleep-ms") o.sleep = milliseconds(std::stoll(value()));
    else if (a == "--lease-ms") o.lease = milliseconds(std::stoll(value()));
    else if (a == "--window-ms") o.window = milliseconds(std::stoll(value()));
    else if (a == "--wait-ms") o.wait = milliseconds(std::stoll(value()));
    else if (a == "--on-duplicate") o.replay = value() == "replay";
    else if (a == "--go") o.go = true;
    else if (a == "--until-lost") o.until_lost = value();
    else {
      std::cerr << "dedupe_worker: unknown option " << a << "\n";
      return 2;
    }
  }
  try {
    return run(o);
  } catch (const std::exception& e) {
    say(std::string("ERROR ") + e.what());
    return 1;
  }
}
