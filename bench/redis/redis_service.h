// The woven method bench_redis_woven calls: one fixed-ttl lock on a hot key.
#pragma once

class RedisLocked {
 public:
  virtual ~RedisLocked() = default;
  [[lock(key="bench:woven", ttl=10s)]] virtual long locked(long x);
  virtual long plain(long x);
};
