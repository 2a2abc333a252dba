// One contender of the fault soak (tests/soak/test_fault_soak.cpp).
//
//   soak_worker <lock url> <oracle port> <keys> <lease ms> <log file> <worker id> <seconds>
//
// Loops until the time is up: takes one of <keys> lock keys, and inside the
// critical section
//   1. enters the key's occupancy set on the oracle server (a size > 1 is an
//      overlap: two holders at once),
//   2. waits a little (so a pause of the holder lands before its read as
//      often as before its write), then reads the key's counter from the
//      oracle, presenting its fencing token
//      (the read raises the oracle's newest token; an older token is refused),
//   3. waits a little and writes counter + 1 with the token (refused when a
//      newer token touched the counter since),
//   4. leaves the occupancy set,
// then releases. Every operation is logged as one line per event, written with
// one write(2) on an O_APPEND file so a SIGKILL loses no finished line:
//   <monotonic µs> <worker> <op> <invoked|ok|failed|unknown|info> <key> <token> <detail>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>

#include "../redis/redis_server.h"
#include "weave/error.h"
#include "weave/lock.h"

using namespace std::chrono_literals;

namespace {

int log_fd = -1;
std::string worker_id;

long long now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void log(const std::string& op, const std::string& type, const std::string& key, std::uint64_t token,
         const std::string& detail = "-") {
  std::string d = detail;
  for (auto& c : d)
    if (c == ' ' || c == '\n') c = '_';
  std::string line = std::to_string(now_us()) + ' ' + worker_id + ' ' + op + ' ' + type + ' ' + key + ' ' +
                     std::to_string(token) + ' ' + (d.empty() ? "-" : d) + '\n';
  [[maybe_unused]] auto n = ::write(log_fd, line.data(), line.size());
}

// The oracle: a resource that checks fencing tokens on reads and writes.
// KEYS: value, newest token, stale-accepted counter. A write also checks that
// the value is still the one the writer read: if not, an update would be lost,
// and the oracle counts it as a stale write accepted (must never happen).
const char* read_script = R"lua(
local newest = tonumber(redis.call('GET', KEYS[2]) or '0')
if tonumber(ARGV[1]) < newest then return -1 end
redis.call('SET', KEYS[2], ARGV[1])
return tonumber(redis.call('GET', KEYS[1]) or '0')
)lua";
const char* write_script = R"lua(
local newest = tonumber(redis.call('GET', KEYS[2]) or '0')
if tonumber(ARGV[1]) < newest then return 0 end
redis.call('SET', KEYS[2], ARGV[1])
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current ~= tonumber(ARGV[2]) then redis.call('INCR', KEYS[3]) end
redis.call('SET', KEYS[1], ARGV[2] + 1)
redis.call('INCR', KEYS[4])
return 1
)lua";
const char* enter_script = R"lua(
redis.call('SADD', KEYS[1], ARGV[1])
return redis.call('SCARD', KEYS[1])
)lua";

}  // namespace

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr, "soak_worker: bad arguments\n");
    return 2;
  }
  const std::string url = argv[1];
  const int oracle_port = std::stoi(argv[2]);
  const int keys = std::stoi(argv[3]);
  const auto lease = std::chrono::milliseconds(std::stoi(argv[4]));
  log_fd = ::open(argv[5], O_WRONLY | O_CREAT | O_APPEND, 0644);
  worker_id = argv[6];
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(std::stoi(argv[7]));
  if (log_fd < 0) return 3;

  weave::LockOptions o;
  o.url = url;
  o.watchdog_lease = lease;
  o.connect_timeout = 500ms;
  o.command_timeout = 300ms;
  // A release the backend failed is "unknown" in the log (the lease may have
  // been lost meanwhile): have it thrown (ReleaseFailed) rather than only reported.
  o.release_failure_policy = weave::ReleaseFailurePolicy::throw_error;
  o.on_lost = [](const weave::Lease& l, std::string_view cause) {
    log("lost", "info", l.key(), l.fencing_token(), std::string(cause));
  };
  weave::LockClient locks(o);
  redis_test::Raw oracle(oracle_port, 5000ms);
  std::mt19937 rng(static_cast<unsigned>(::getpid()));
  log("start", "info", "-", 0, std::to_string(::getpid()));

  while (std::chrono::steady_clock::now() < until) {
    const std::string key = "k" + std::to_string(rng() % keys);
    weave::LeaseHandle h;
    log("acquire", "invoked", key, 0);
    try {
      h = locks.try_acquire(key, {.wait = 2s});
      if (!h) {
        log("acquire", "failed", key, 0, "busy");
        continue;
      }
    } catch (const weave::TimeoutError& e) {  // the script may have run
      log("acquire", "unknown", key, 0, e.what());
      std::this_thread::sleep_for(20ms);
      continue;
    } catch (const weave::Error& e) {
      log("acquire", "failed", key, 0, e.what());
      std::this_thread::sleep_for(20ms);
      continue;
    }
    const std::uint64_t token = h->fencing_token();
    const std::string t = std::to_string(token);
    log("acquire", "ok", key, token);

    log("enter", "invoked", key, token);
    const long long occupancy = oracle.cmd({"EVAL", enter_script, "1", "occ:" + key, worker_id}).integer;
    log("enter", "ok", key, token, std::to_string(occupancy));

    std::this_thread::sleep_for(std::chrono::milliseconds(2 + rng() % 10));
    log("read", "invoked", key, token);
    const long long n =
        oracle.cmd({"EVAL", read_script, "2", "value:" + key, "newest:" + key, t}).integer;
    if (n < 0) {
      log("read", "failed", key, token, "stale");
    } else {
      log("read", "ok", key, token, std::to_string(n));
      std::this_thread::sleep_for(std::chrono::milliseconds(2 + rng() % 10));
      const bool stop = h->stop_token().stop_requested();
      log("write", "invoked", key, token, stop ? "after-stop" : "-");
      const long long w = oracle.cmd({"EVAL", write_script, "4", "value:" + key, "newest:" + key,
                                      "stale-accepted", "accepted:" + key, t, std::to_string(n)})
                              .integer;
      log("write", w == 1 ? "ok" : "failed", key, token, w == 1 ? "-" : "stale");
    }
    oracle.cmd({"SREM", "occ:" + key, worker_id});
    log("exit", "ok", key, token);

    log("release", "invoked", key, token);
    try {
      h.release();
      log("release", "ok", key, token);
    } catch (const weave::LeaseLost& e) {
      log("release", "failed", key, token, "lost");
    } catch (const weave::Error& e) {
      log("release", "unknown", key, token, e.what());
    }
  }
  log("done", "info", "-", 0);
  return 0;
}
