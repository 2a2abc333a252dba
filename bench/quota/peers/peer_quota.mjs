// The Node side of bench/quota/peers, over ioredis:
//   rate-latency, rate-accuracy   rate-limiter-flexible RateLimiterRedis.consume()
//   sem-cycle, sem-handoff        redis-semaphore Semaphore acquire() / release()
//   floor                         a raw ioredis EVALSHA of `return 1` (Node's own floor)
// Usage: node peer_quota.mjs workload=... port=P [key= n= calls= ms= start=NS|stdin worker= rate= interval_us= permits= hold_us=]
// One JSON line on stdout; times from process.hrtime.bigint() (CLOCK_MONOTONIC, as the C++ driver's).
// The settings are listed in SETTINGS.md.
import Redis from 'ioredis';
import rlf from 'rate-limiter-flexible';
import semaphores from 'redis-semaphore';

const { RateLimiterRedis } = rlf;
const { Semaphore } = semaphores;

const args = {};
for (const a of process.argv.slice(2)) {
  const eq = a.indexOf('=');
  if (eq > 0) args[a.slice(0, eq)] = a.slice(eq + 1);
}
const wl = args.workload;
const opt = (k, d) => (args[k] === undefined ? d : Number(args[k]));
const key = args.key ?? `quota-peers:${wl}`;
const worker = opt('worker', 0);
const now = () => Number(process.hrtime.bigint());
const sleepMs = (ms) => new Promise((done) => setTimeout(done, ms));
// Node's timers may fire a little early (they count whole ms of the loop's clock): sleep again until t.
const sleepUntil = async (t) => {
  for (let left = t - now(); left > 0; left = t - now()) await sleepMs(left / 1e6);
};
// start=stdin: say "ready" (warmed up), then read the start time the orchestrator hands every worker at
// once; start=NS: that time; none: now.
async function startTime() {
  if (args.start !== 'stdin') return opt('start', 0);
  process.stdout.write('ready\n');
  let text = '';
  for await (const chunk of process.stdin) {
    text += chunk;
    if (text.includes('\n')) break;
  }
  return Number(text.trim());
}
const client = new Redis({ host: '127.0.0.1', port: opt('port', 6379) });

function emit(contender, fields) {
  process.stdout.write(JSON.stringify({ contender, workload: wl, ...fields }) + '\n');
}

// n timed calls of `op`, as one latency line.
async function timed(contender, n, op) {
  const lat = new Array(n);
  const t0 = now();
  for (let i = 0; i < n; i++) {
    const s = now();
    await op();
    lat[i] = now() - s;
  }
  return { n, secs: (now() - t0) / 1e9, lat_ns: lat };
}

// consume() resolves when admitted and rejects with a RateLimiterRes (not an Error) when refused.
async function admitted(limiter, k) {
  try {
    await limiter.consume(k);
    return true;
  } catch (e) {
    if (e instanceof Error) throw e;
    return false;
  }
}

async function main() {
  const n = opt('n', 5000), ms = opt('ms', 10000);
  if (wl === 'floor') {
    const sha = await client.script('LOAD', 'return 1');
    const calls = opt('calls', 1);
    const round = async () => {
      for (let k = 0; k < calls; k++) await client.evalsha(sha, 1, key);
    };
    for (let i = 0; i < 200; i++) await round();
    emit('ioredis-floor', await timed('ioredis-floor', n, round));
  } else if (wl === 'rate-latency') {
    // A limit far above what one client asks for: every call is admitted.
    const limiter = new RateLimiterRedis({ storeClient: client, useRedisPackage: false, points: 1e9, duration: 1 });
    for (let i = 0; i < 200; i++) await admitted(limiter, `${key}:warm`);
    let refused = 0;
    const out = await timed('rate-limiter-flexible', n, async () => {
      if (!(await admitted(limiter, key))) refused++;
    });
    emit('rate-limiter-flexible', { ...out, refused });
  } else if (wl === 'rate-accuracy') {
    const limiter = new RateLimiterRedis({ storeClient: client, useRedisPackage: false, points: opt('rate', 200), duration: 1 });
    await admitted(limiter, `${key}:warm:${worker}`);
    const interval = opt('interval_us', 4000) * 1000;
    const start = await startTime();
    await sleepUntil(start);
    const tStart = now(), end = (start || tStart) + ms * 1e6;
    const at = [];
    let calls = 0;
    // Paced as the C++ driver: Poisson arrivals, one call per `interval` on average, at most one interval made up.
    const gap = () => Math.floor(-Math.log(1 - Math.random()) * interval);
    for (let next = tStart + gap(); next < end; ) {
      await sleepUntil(next);
      const s = now();
      const ok = await admitted(limiter, key);
      const e = now();
      calls++;
      if (ok) at.push(s, e); // the server decided in between
      next += gap();
      if (next < e - interval) next = e;
    }
    emit('rate-limiter-flexible', { worker, calls, start_ns: tStart, end_ns: now(), admitted_ns: at });
  } else if (wl === 'sem-cycle') {
    // One Semaphore object per acquisition (its identifier is drawn when it is made).
    const acq = [];
    const cycle = async (k) => {
      const t = now();
      const s = new Semaphore(client, k, 1, { lockTimeout: 30000 });
      await s.acquire();
      acq.push(now() - t);
      await s.release();
    };
    for (let i = 0; i < 200; i++) await cycle(`${key}:warm`);
    acq.length = 0;
    emit('redis-semaphore', { ...(await timed('redis-semaphore', n, () => cycle(key))), acquire_ns: acq });
  } else if (wl === 'sem-handoff') {
    const permits = opt('permits', 2), holdMs = opt('hold_us', 2000) / 1000;
    const options = { lockTimeout: 30000, acquireTimeout: 120000 }; // retryInterval: the default (10 ms)
    const warm = new Semaphore(client, `${key}:warm:${worker}`, permits, options);
    await warm.acquire();
    await warm.release();
    const start = await startTime();
    await sleepUntil(start);
    const end = (start || now()) + ms * 1e6;
    const iv = [];
    while (now() < end) {
      const asked = now();
      const s = new Semaphore(client, key, permits, options);
      await s.acquire();
      const acquired = now();
      await sleepMs(holdMs);
      const releasing = now();
      await s.release();
      iv.push(acquired, releasing, asked, now()); // flat, 4 per grant
    }
    emit('redis-semaphore', { worker, intervals: iv });
  } else {
    throw new Error(`unknown workload ${wl}`);
  }
}

main().then(
  () => client.disconnect(),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
