// The Weave runner of bench/queue (protocol: bench/queue/README.md): the same
// cases as peer_bullmq.mjs through weave::Queue on the harness's Redis.
//   bench_queue_weave --redis-url URL --scenario offer|offer-bulk|deliver|lateness|idle [--marks] [flags]
// Timing as the harness defines it: wall clock (system_clock, ms as a double)
// read before the offer call and on handler entry.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <deque>
#include <future>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "weave/error.h"
#include "weave/queue.h"

using namespace std::chrono_literals;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

std::map<std::string, std::string> args;
bool marks = false;

long long num(const std::string& k, long long d) { return args.count(k) ? std::stoll(args[k]) : d; }

double wall_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch()).count();
}

double cpu_s() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

void mark(const char* which) {
  if (!marks) return;
  std::printf("{\"mark\":\"%s\"}\n", which);
  std::fflush(stdout);
  std::string line;
  std::getline(std::cin, line);
}

json result(const std::string& scenario) {
  return {{"runner", "weave"}, {"scenario", scenario}, {"messages", 0}, {"errors", 0}, {"offers_per_s", nullptr},
          {"deliveries_per_s", nullptr}, {"lateness_ms", nullptr}, {"api", "weave::Queue (offer_json / take_json, then ack_and_take)"}};
}

json summary(std::vector<double> v) {
  if (v.empty()) return nullptr;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, std::size_t(q * double(v.size())))]; };
  double sum = 0;
  for (double x : v) sum += x;
  return {{"p50", at(0.5)}, {"p99", at(0.99)}, {"max", v.back()}, {"min", v.front()}, {"mean", sum / double(v.size())},
          {"count", v.size()}};
}

// `n` offers of delay 0 from `threads` threads; returns the errors.
long long offer_ready(weave::Queue& q, long long n, int threads) {
  std::atomic<long long> next{0}, errors{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&] {
      for (long long i; (i = next.fetch_add(1)) < n;) try {
          q.offer_json("{\"n\":" + std::to_string(i) + "}", 0ms);
        } catch (const std::exception&) {
          ++errors;
        }
    });
  for (auto& t : ts) t.join();
  return errors;
}

// One thread keeping up to `window` offers unanswered (offer_json_async),
// as the peer keeps `inflight` queue.add() promises pending.
long long offer_windowed(weave::Queue& q, long long n, int window) {
  long long errors = 0;
  std::deque<std::future<std::string>> pending;
  const auto settle_oldest = [&] {
    try {
      pending.front().get();
    } catch (const std::exception&) {
      ++errors;
    }
    pending.pop_front();
  };
  for (long long i = 0; i < n; ++i) {
    if (static_cast<int>(pending.size()) >= window) settle_oldest();
    try {
      pending.push_back(q.offer_json_async("{\"n\":" + std::to_string(i) + "}", 0ms));
    } catch (const std::exception&) {
      ++errors;
    }
  }
  while (!pending.empty()) settle_oldest();
  return errors;
}

// `concurrency` handlers take and ack until `expect` are acknowledged (or
// `timeout`); `on_message` runs on handler entry. `batch` > 1: each takes up
// to `batch` messages per round trip (take_many_json, then ack_and_take_many).
// *finished: when the last ack came back (as the peer stops its clock at the
// last job's completion); the takes then waiting are stopped, not timed.
template <class OnMessage>
long long consume(weave::Queue& q, long long expect, int concurrency, std::chrono::seconds timeout, OnMessage on_message,
                  std::atomic<long long>* failed, std::size_t batch = 1, Clock::time_point* finished = nullptr) {
  std::atomic<long long> done{0}, handled{0};
  std::stop_source all_done;
  std::mutex end_mutex;
  const auto until = Clock::now() + timeout;
  const auto count = [&](long long n) {
    if (done.fetch_add(n) + n < expect) return;
    std::lock_guard g(end_mutex);
    if (all_done.stop_requested()) return;
    if (finished) *finished = Clock::now();
    all_done.request_stop();
  };
  std::vector<std::thread> ts;
  for (int t = 0; t < concurrency; ++t)
    ts.emplace_back([&] {
      const std::stop_token stop = all_done.get_token();
      std::optional<weave::QueueDelivery> d;
      std::vector<weave::QueueDelivery> many;
      while (!stop.stop_requested() && Clock::now() < until) {
        try {
          if (batch > 1) {
            if (many.empty()) many = q.take_many_json(batch, 200ms, stop);
            for (auto& m : many) on_message(m);
            const auto n = static_cast<long long>(many.size());
            const bool last = handled.fetch_add(n) + n >= expect;  // nothing more to wait for
            many = q.ack_and_take_many(many, batch, last ? 0ms : 200ms, stop);  // the acks and the next take: one round trip
            count(n);
            continue;
          }
          if (!d) d = q.take_json(200ms, stop);
          if (!d) continue;
          on_message(*d);
          const bool last = handled.fetch_add(1) + 1 >= expect;
          d = d->ack_and_take(last ? 0ms : 200ms, stop);  // the ack and the next take in one round trip
          count(1);
        } catch (const std::exception&) {
          d.reset();
          many.clear();
          ++*failed;
        }
      }
    });
  for (auto& t : ts) t.join();
  return done.load();
}

// Times send(q, n) (send(queue, count) offers `count` messages of delay 0
// and returns the errors) after a warm-up on another queue.
template <class Send>
json timed_offers(weave::Queue& q, const std::string& scenario, const std::string& api, Send send) {
  const long long n = num("messages", 10000);
  weave::Queue warm(q.name() + "-warm");
  send(warm, 200);  // connections and scripts
  mark("begin");
  const double c0 = cpu_s();
  const auto t0 = Clock::now();
  const long long errors = send(q, n);
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  const double used = cpu_s() - c0;
  mark("end");
  json r = result(scenario);
  r["messages"] = n;
  r["errors"] = errors;
  r["elapsed_s"] = secs;
  r["client_cpu_s"] = used;
  r["offers_per_s"] = double(n - errors) / secs;
  r["api"] = api;
  return r;
}

// --inflight W > 1: one thread, W offer_json_async unanswered at most;
// with --threads, W threads calling offer_json instead.
json offer(weave::Queue& q) {
  const int window = int(std::clamp<long long>(num("inflight", 1), 1, 1024));
  if (window == 1 || num("threads", 0) != 0) {
    const int threads = std::min(window, 64);
    return timed_offers(q, "offer", "Queue::offer_json, " + std::to_string(threads) + " threads (one call each at a time)",
                        [&](weave::Queue& to, long long count) { return offer_ready(to, count, threads); });
  }
  return timed_offers(q, "offer", "Queue::offer_json_async, one thread, " + std::to_string(window) + " unanswered at most",
                      [&](weave::Queue& to, long long count) { return offer_windowed(to, count, window); });
}

// offer-bulk: `batch` messages per offer_many_json call, each call awaited
// before the next (as the peer awaits queue.addBulk).
json offer_bulk(weave::Queue& q) {
  const long long batch = std::max<long long>(1, num("batch", 1000));
  return timed_offers(q, "offer-bulk", "Queue::offer_many_json x" + std::to_string(batch),
                      [&](weave::Queue& to, long long count) {
                        long long errors = 0;
                        std::vector<std::string> jsons;
                        std::vector<weave::JsonOffer> offers;
                        for (long long i = 0; i < count; i += batch) {
                          jsons.clear();
                          offers.clear();
                          for (long long j = i; j < std::min(count, i + batch); ++j)
                            jsons.push_back("{\"n\":" + std::to_string(j) + "}");
                          for (const std::string& json : jsons) offers.push_back({json, 0ms});
                          try {
                            to.offer_many_json(offers);
                          } catch (const std::exception&) {
                            errors += static_cast<long long>(offers.size());
                          }
                        }
                        return errors;
                      });
}

json deliver(weave::Queue& q) {
  const long long n = num("messages", 10000);
  const int c = int(std::max<long long>(1, num("concurrency", 1)));
  const long long preload_errors = offer_ready(q, n, 8);
  const long long expect = n - preload_errors;
  { auto warm = weave::Queue(q.name() + "-warm").take_json(0ms); }  // connections and scripts
  std::atomic<long long> failed{0};
  mark("begin");
  const double c0 = cpu_s();
  const auto t0 = Clock::now();
  const auto batch = static_cast<std::size_t>(std::clamp<long long>(num("take-batch", 1), 1, 1000));
  Clock::time_point finished = Clock::now();
  const long long done =
      consume(q, expect, c, std::chrono::seconds(num("timeout-s", 120)), [](auto&) {}, &failed, batch, &finished);
  if (done < expect) finished = Clock::now();  // timed out
  const double secs = std::chrono::duration<double>(finished - t0).count();
  const double used = cpu_s() - c0;
  mark("end");
  json r = result("deliver");
  r["messages"] = expect;
  r["completed"] = done;
  r["errors"] = preload_errors + failed.load() + (expect - done);
  r["elapsed_s"] = secs;
  r["client_cpu_s"] = used;
  r["deliveries_per_s"] = double(done) / secs;
  r["settings"] = {{"concurrency", c}, {"lease_ms", 30000}, {"take_batch", batch}};
  if (batch > 1) r["api"] = "weave::Queue (take_many_json, then ack_and_take_many)";
  return r;
}

json lateness(weave::Queue& q, const std::string& url) {
  const long long n = num("messages", 5000);
  const double rate = double(std::max<long long>(1, num("rate", 1000)));
  const int c = int(std::max<long long>(1, num("concurrency", 16)));
  const int producers = int(std::clamp<long long>(num("inflight", 16), 1, 16));
  const long long lo = num("min-delay-ms", 100), hi = num("max-delay-ms", 10000);
  int go[2], back[2];
  if (::pipe(go) != 0 || ::pipe(back) != 0) throw std::runtime_error("pipe");
  { auto warm = q.take_json(0ms); }  // connections, scripts, the wake subscription
  const pid_t child = ::fork();
  if (child == 0) {  // the producer: another process, paced at `rate`
    weave::QueueOptions o;
    o.url = url;
    weave::configure_queues(o);
    weave::Queue p(q.name());
    char c0;
    if (::read(go[0], &c0, 1) != 1) ::_exit(1);
    std::atomic<long long> next{0}, errors{0};
    const auto start = Clock::now();
    const double cpu0 = cpu_s();
    std::vector<std::thread> ts;
    for (int t = 0; t < producers; ++t)
      ts.emplace_back([&, t] {
        std::mt19937 rng(unsigned(t) * 7919u + 1u);
        std::uniform_int_distribution<long long> delay(lo, hi);
        for (long long i; (i = next.fetch_add(1)) < n;) {
          std::this_thread::sleep_until(start + std::chrono::nanoseconds(static_cast<long long>(double(i) * 1e9 / rate)));
          const long long d = delay(rng);
          const double due = wall_ms() + double(d);
          try {
            p.offer_json("{\"due\":" + std::to_string(due) + "}", std::chrono::milliseconds(d));
          } catch (const std::exception&) {
            ++errors;
          }
        }
      });
    for (auto& t : ts) t.join();
    const double secs = std::chrono::duration<double>(Clock::now() - start).count();
    const std::string out = std::to_string(errors.load()) + " " + std::to_string(secs) + " " + std::to_string(cpu_s() - cpu0);
    (void)!::write(back[1], out.data(), out.size());
    ::_exit(0);
  }
  std::vector<double> late;
  std::mutex m;
  std::atomic<long long> failed{0};
  mark("begin");
  const double c0 = cpu_s();
  const auto t0 = Clock::now();
  (void)!::write(go[1], "g", 1);
  const long long done = consume(q, n, c, std::chrono::seconds(num("timeout-s", 120)),
                                 [&](weave::QueueDelivery& d) {
                                   const double start = wall_ms();
                                   const double due = json::parse(d.payload())["due"].get<double>();
                                   std::lock_guard g(m);
                                   late.push_back(start - due);
                                 },
                                 &failed);
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  char buf[128] = {0};
  (void)!::read(back[0], buf, sizeof buf - 1);
  ::waitpid(child, nullptr, 0);
  const double used = cpu_s() - c0;
  mark("end");
  long long perrors = 0;
  double psecs = 1, pcpu = 0;
  std::sscanf(buf, "%lld %lf %lf", &perrors, &psecs, &pcpu);
  json r = result("lateness");
  r["messages"] = n;
  r["completed"] = done;
  r["errors"] = perrors + failed.load() + (n - perrors - done);
  r["elapsed_s"] = secs;
  r["client_cpu_s"] = used + pcpu;
  r["offers_per_s"] = double(n - perrors) / psecs;
  r["offered_rate_target"] = rate;
  r["lateness_ms"] = summary(late);
  r["settings"] = {{"concurrency", c}, {"producer_threads", producers}};
  return r;
}

json idle(weave::Queue& q) {
  const auto window = std::chrono::seconds(num("seconds", 10));
  if (args.count("idle-delayed-ms")) q.offer_json("{}", std::chrono::milliseconds(num("idle-delayed-ms", 3600000)));
  // Subscribed to its wake-ups before the window: a take subscribes once its
  // first look found nothing and time is left (the process's first request
  // also loads the script: 1 ms was not always enough).
  { auto warm = q.take_json(100ms); }
  mark("begin");
  const auto until = Clock::now() + window;
  long long got = 0;
  while (Clock::now() < until) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now());
    if (auto d = q.take_json(std::max(left, 0ms))) {
      d->ack();
      ++got;
    }
  }
  mark("end");
  json r = result("idle");
  r["completed"] = got;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--marks") {
      marks = true;
      continue;
    }
    if (a.rfind("--", 0) == 0 && i + 1 < argc) args[a.substr(2)] = argv[++i];
  }
  const std::string scenario = args["scenario"], url = args["redis-url"];
  try {
    weave::QueueOptions o;
    o.url = url;
    o.pool_size = 64;
    weave::configure_queues(o);
    weave::Queue q(args.count("queue") ? args["queue"] : "qbench-" + scenario + "-" + std::to_string(::getpid()));
    json r;
    if (scenario == "offer") r = offer(q);
    else if (scenario == "offer-bulk") r = offer_bulk(q);
    else if (scenario == "deliver") r = deliver(q);
    else if (scenario == "lateness") r = lateness(q, url);
    else if (scenario == "idle") r = idle(q);
    else r = {{"runner", "weave"}, {"scenario", scenario}, {"unsupported", true}};
    std::printf("%s\n", r.dump().c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_queue_weave: %s\n", e.what());
    return 1;
  }
}
