// The service the proxy benchmark calls: the same body three ways.
#pragma once

class Counter {
 public:
  virtual ~Counter() = default;
  virtual long plain(long x) { return total_ += x; }
  [[noop]] virtual long through_empty_chain(long x) { return total_ += x; }
  [[lock(key="bench:<x>", ttl=10s)]] virtual long through_lock(long x) { return total_ += x; }

 private:
  long total_ = 0;
};
