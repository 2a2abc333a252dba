// The service the resilience benchmark calls: one body under each policy,
// on its closed path (nothing fails, nothing waits). The body is out of line
// (bench_resilience.cpp) so no call is inlined into the loop.
#pragma once

class Guarded {
 public:
  virtual ~Guarded() = default;
  [[noop]] virtual long empty_chain(long x);
  [[retry(attempts=3, backoff=1ms, max_backoff=10ms)]] virtual long retried(long x);
  [[timeout(after=10s)]] virtual long timed(long x);
  [[bulkhead(name="bench:bulkhead", max=64)]] virtual long bulkheaded(long x);
  [[circuit_breaker(name="bench:count", window_calls=100, min_calls=20)]] virtual long breaker_count(long x);
  [[circuit_breaker(name="bench:time", window=60s, min_calls=20)]] virtual long breaker_time(long x);
  [[circuit_breaker(name="bench:shared", window=60s, min_calls=20, shared=true)]] virtual long breaker_shared(long x);
};
