// Weave's worker for bench/schedule (bench/schedule/README.md): serves
// bench_schedule.h's schedule (every 100 ms) until killed, one line per run:
//   <tick ms> <start: wall clock ms, 3 decimals> <pid> <attempt>
//   bench_schedule_weave --redis-url redis://127.0.0.1:PORT --log FILE
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <stop_token>
#include <string>

#include "bench_schedule.weave.h"
#include "weave/delay_worker.h"
#include "weave/queue.h"

void schedulebench::Ticks::tick() {
  const double now =
      std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch()).count();
  const weave::Tick& t = *weave::current_tick();
  const long long tick = std::chrono::duration_cast<std::chrono::milliseconds>(t.time.time_since_epoch()).count();
  std::fprintf(log_, "%lld %.3f %d %d\n", tick, now, static_cast<int>(::getpid()), t.attempt);
  std::fflush(log_);  // one line per write: a SIGKILL loses no finished line
}

int main(int argc, char** argv) {
  std::string url, log;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--redis-url")) url = argv[i + 1];
    if (!std::strcmp(argv[i], "--log")) log = argv[i + 1];
  }
  std::FILE* out = std::fopen(log.c_str(), "a");
  if (url.empty() || !out) return 2;
  weave::QueueOptions o;
  o.url = url;
  o.lease = std::chrono::seconds(5);  // a killed worker's tick is taken over after 5 s (BullMQ: lockDuration)
  weave::configure_queues(o);
  weave::Woven<schedulebench::Ticks> ticks(out);
  weave::DelayWorker worker;
  worker.serve(ticks);
  worker.run(std::stop_token{});
}
