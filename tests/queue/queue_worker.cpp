// A process that offers to or takes from a queue once, for tests that run it
// under another clock (faketime) or kill it:
//   queue_worker offer <url> <queue> <delay ms>     prints the message id
//   queue_worker take <url> <queue> <timeout ms>    prints "<id> <lateness ms>" (acknowledged) or "none"
#include <chrono>
#include <cstdio>
#include <string>

#include "weave/queue.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: queue_worker offer|take <url> <queue> <ms>\n");
    return 2;
  }
  const std::string mode = argv[1];
  weave::QueueOptions o;
  o.url = argv[2];
  weave::configure_queues(o);
  weave::Queue q(argv[3]);
  const std::chrono::milliseconds ms(std::stoll(argv[4]));
  try {
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
