// The closed path of cockatiel's and opossum's policies in Node, for scale
// next to bench_resilience: each run alternates turns of 64 awaited calls
// of a bare async function and 64 through the policy, timing both; prints
// one JSON line per policy (ns per call, and the difference).
import { retry, timeout, bulkhead, circuitBreaker, handleAll, ConsecutiveBreaker, TimeoutStrategy } from 'cockatiel';
import CircuitBreaker from 'opossum';

const TURN = 64;
const seconds = Number(process.argv[2] ?? 2);

let x = 0;
async function body() { return ++x; }

async function alternate(name, through) {
  let base = 0n, policy = 0n, calls = 0;
  const end = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
  while (process.hrtime.bigint() < end) {
    const t0 = process.hrtime.bigint();
    for (let k = 0; k < TURN; ++k) await body();
    const t1 = process.hrtime.bigint();
    for (let k = 0; k < TURN; ++k) await through();
    const t2 = process.hrtime.bigint();
    base += t1 - t0;
    policy += t2 - t1;
    calls += TURN;
  }
  const b = Number(base) / calls, p = Number(policy) / calls;
  console.log(JSON.stringify({ name, base_ns: b, policy_ns: p, over_ns: p - b, calls }));
}

const r = retry(handleAll, { maxAttempts: 2 });
const t = timeout(10_000, TimeoutStrategy.Cooperative);
const bh = bulkhead(64);
const cb = circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) });
const opossum = new CircuitBreaker(body, { timeout: false, errorThresholdPercentage: 50, resetTimeout: 10_000 });

await alternate('cockatiel/retry', () => r.execute(body));
await alternate('cockatiel/timeout', () => t.execute(body));
await alternate('cockatiel/bulkhead', () => bh.execute(body));
await alternate('cockatiel/circuit_breaker', () => cb.execute(body));
await alternate('opossum/circuit_breaker', () => opossum.fire());
opossum.shutdown();
