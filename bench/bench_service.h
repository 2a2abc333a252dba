// The service the proxy benchmark calls: the same body several ways. Bodies
// are out of line (bench_service.cpp) so no call is inlined into the loop.
#pragma once

class Counter {
 public:
  virtual ~Counter() = default;
  virtual long plain(long x);
  [[noop]] virtual long through_empty_chain(long x);
  [[lock(key="bench:<x>", ttl=10s)]] virtual long through_lock(long x);
  [[lock(key="bench:<x>")]] virtual long through_watchdog_lock(long x);

 private:
  long total_ = 0;
};
