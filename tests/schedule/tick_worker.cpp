// A process serving a schedule of ticker.h, for tests that run several of
// them under other clocks (faketime), kill or stop them:
//   tick_worker <url> <log file> [slow first attempts ms]   Ticker, until killed
//   tick_worker <url> <log file> paris <seconds>            ParisTwoOClock for that long, then
//       N <the schedule's last tick offered, ms>            logged as it leaves
// Log lines (one write each, O_APPEND: whole lines survive a SIGKILL):
//   S <tick ms> <attempt> <fencing token> <pid> <this process's system clock ms>   a run started
//   E <tick ms> <attempt> <pid>                                                    it ended
//   L <tick ms> <attempt> <pid>                                                    it found its lease lost
// The queue's delivery lease is QUEUE_WORKER_LEASE_MS (1000 by default).
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <stop_token>
#include <string>
#include <thread>

#include "queue/queue_runtime.h"
#include "ticker.weave.h"
#include "weave/delay_worker.h"
#include "weave/queue.h"

namespace {

void append(int fd, const std::string& line) {
  const std::string l = line + "\n";
  (void)!::write(fd, l.data(), l.size());
}

long long ms_of(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

}  // namespace

void scheduletest::Ticker::tick() {
  const weave::Tick& t = *weave::current_tick();
  const std::string tick = std::to_string(ms_of(t.time)) + " " + std::to_string(t.attempt);
  const std::string pid = std::to_string(::getpid());
  append(fd_, "S " + tick + " " + std::to_string(t.fencing_token) + " " + pid + " " +
                  std::to_string(ms_of(std::chrono::system_clock::now())));
  if (t.attempt == 1 && slow_first_ms_ > 0) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(slow_first_ms_);
    while (std::chrono::steady_clock::now() < until) {
      if (weave::current_tick_lease()->lost()) {
        append(fd_, "L " + tick + " " + pid);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  append(fd_, "E " + tick + " " + pid);
}

void scheduletest::ParisTwoOClock::run(const weave::Tick& t) {
  append(fd_, "S " + std::to_string(ms_of(t.time)) + " " + std::to_string(t.attempt) + " " +
                  std::to_string(t.fencing_token) + " " + std::to_string(::getpid()) + " " +
                  std::to_string(ms_of(std::chrono::system_clock::now())));
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const int fd = ::open(argv[2], O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return 1;
  weave::QueueOptions o;
  o.url = argv[1];
  const char* lease = std::getenv("QUEUE_WORKER_LEASE_MS");
  o.lease = std::chrono::milliseconds(lease ? std::atoi(lease) : 1000);
  weave::configure_queues(o);
  if (argc > 4 && std::string(argv[3]) == "paris") {
    weave::Woven<scheduletest::ParisTwoOClock> paris(fd);
    {
      weave::DelayWorker worker;
      worker.serve(paris);
      std::jthread t([&](std::stop_token stop) { worker.run(stop); });
      std::this_thread::sleep_for(std::chrono::seconds(std::atoi(argv[4])));
    }
    weave::detail::QueueRuntime rt(o);
    append(fd, "N " + std::to_string(rt.state("schedule/paris-two")->store().ticks("paris-two").last_tick_ms));
    return 0;
  }
  weave::Woven<scheduletest::Ticker> ticker(fd, argc > 3 ? std::atoi(argv[3]) : 0);
  weave::DelayWorker worker;
  worker.serve(ticker);
  worker.run(std::stop_token{});  // until killed
}
