// A process that uses a queue, for tests that run it under another clock
// (faketime), kill it or stop it:
//   queue_worker offer <url> <queue> <delay ms>      prints the message id
//   queue_worker take <url> <queue> <timeout ms>     prints "<id> <lateness ms>" (acknowledged) or "none"
//   queue_worker consume <url> <queue> <log file>    takes until killed; appends one line per step
//   queue_worker consume-batch <url> <queue> <log file>  the same, up to 8 per take (take_many_json,
//                                                     then ack_and_take_many)
//       D <id> <lateness ms> <attempt> <fencing token>   delivered
//       a <id> | A <id>                                   about to ack | acknowledged
//       F <id> | R <id>                                   failed on purpose | settle refused
//     about 1 in 20 deliveries fails on purpose, 1 in 30 works for 1.5 leases (kept by renewals) before its ack.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "weave/queue.h"

namespace {

void append(int fd, const std::string& line) {
  const std::string l = line + "\n";
  (void)!::write(fd, l.data(), l.size());  // one write per line (O_APPEND): whole lines survive a SIGKILL
}

// The chaos of one delivery: about 1 in 20 fails on purpose (true: settled
// here), 1 in 30 works for 1.5 leases (kept by renewals).
bool chaos(int fd, weave::QueueDelivery& d, std::chrono::milliseconds lease) {
  append(fd, "D " + d.id() + " " + std::to_string(d.lateness().count()) + " " + std::to_string(d.attempt()) + " " +
                 std::to_string(d.fencing_token()));
  const std::size_t roll = std::hash<std::string>{}(d.id() + "#" + std::to_string(d.attempt())) % 60;
  if (roll < 3) {
    try {
      d.fail("chaos");
      append(fd, "F " + d.id());
    } catch (const weave::DeliveryLost&) {
      append(fd, "R " + d.id());
    }
    return true;
  }
  if (roll < 5) std::this_thread::sleep_for(lease + lease / 2);  // slow work: kept by its renewals
  return false;
}

int consume_batches(weave::Queue& q, const char* log, std::chrono::milliseconds lease) {
  const int fd = ::open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return 1;
  constexpr std::size_t kBatch = 8;
  std::vector<weave::QueueDelivery> batch;
  for (;;) {
    try {
      if (batch.empty()) batch = q.take_many_json(kBatch, std::chrono::milliseconds(500));
      std::vector<std::string> acking;
      for (auto& d : batch)
        if (!chaos(fd, d, lease)) {
          append(fd, "a " + d.id());  // about to ack: a SIGKILL before "A" leaves this
          acking.push_back(d.id());
        }
      auto next = q.ack_and_take_many(batch, kBatch, std::chrono::milliseconds(500));
      for (auto& d : batch)
        if (std::find(acking.begin(), acking.end(), d.id()) != acking.end())
          append(fd, (d.lease().lost() ? "R " : "A ") + d.id());  // a refused ack: its lease says so
      batch = std::move(next);
    } catch (const weave::Error& e) {  // the server restarting: what is held comes back after its lease
      if (!e.retryable()) throw;
      batch.clear();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

int consume(weave::Queue& q, const char* log, std::chrono::milliseconds lease) {
  const int fd = ::open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return 1;
  for (;;) {
    std::optional<weave::QueueDelivery> d;
    try {
      d = q.take_json(std::chrono::milliseconds(500));
    } catch (const weave::Error& e) {  // the server restarting (I/O error, LOADING)
      if (!e.retryable()) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    if (!d) continue;
    try {
      if (chaos(fd, *d, lease)) continue;
      append(fd, "a " + d->id());  // about to ack: a SIGKILL before "A" leaves this
      d->ack();
      append(fd, "A " + d->id());
    } catch (const weave::DeliveryLost&) {
      append(fd, "R " + d->id());
    } catch (const weave::Error& e) {
      if (!e.retryable()) throw;  // (settled or not: the lease runs out and it comes back)
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: queue_worker offer|take|consume|consume-batch <url> <queue> <ms | log file>\n");
    return 2;
  }
  const std::string mode = argv[1];
  weave::QueueOptions o;
  o.url = argv[2];
  if (const char* lease = std::getenv("QUEUE_WORKER_LEASE_MS")) o.lease = std::chrono::milliseconds(std::stoll(lease));
  o.retries = 1000;
  o.backoff = std::chrono::milliseconds(20);
  o.backoff_cap = std::chrono::milliseconds(200);
  try {
    weave::configure_queues(o);
    weave::Queue q(argv[3]);
    if (mode == "consume") return consume(q, argv[4], o.lease);
    if (mode == "consume-batch") return consume_batches(q, argv[4], o.lease);
    const std::chrono::milliseconds ms(std::stoll(argv[4]));
    if (mode == "offer") {
      std::printf("%s\n", q.offer_json("{}", ms).c_str());
      return 0;
    }
    auto d = q.take_json(ms);
    if (!d) {
      std::printf("none\n");
      return 0;
    }
    d->ack();
    std::printf("%s %lld\n", d->id().c_str(), static_cast<long long>(d->lateness().count()));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "queue_worker: %s\n", e.what());
    return 1;
  }
}
