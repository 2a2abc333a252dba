// BullMQ runner for bench/queue (protocol: bench/queue/README.md).
//   node peer_bullmq.mjs --redis-url redis://127.0.0.1:PORT --scenario <name> [--messages N] [--rate R]
//        [--concurrency C] [--inflight W] [--batch B] [--min-delay-ms D0] [--max-delay-ms D1]
//        [--seconds S] [--idle-delayed-ms D] [--queue NAME] [--timeout-s T] [--marks]
// Scenarios: offer, offer-bulk, deliver, lateness, idle. One JSON result line on stdout at the end;
// with --marks also {"mark":"begin"} / {"mark":"end"} around the measured phase, each answered by
// one line on stdin. Everything else goes to stderr.
// BullMQ settings: documented defaults (Worker: drainDelay 5 s, lockDuration 30 s, stalledInterval
// 30 s, jobs kept after completion) except concurrency = --concurrency, and maxRetriesPerRequest:
// null on the ioredis connection, which BullMQ requires for workers.
import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Queue, Worker } from 'bullmq';

const require = createRequire(import.meta.url);
const VERSION = require('bullmq/package.json').version;

// ---- arguments --------------------------------------------------------------------------------
const argv = process.argv.slice(2);
const opt = {};
for (let i = 0; i < argv.length; i++) {
  if (!argv[i].startsWith('--')) continue;
  const k = argv[i].slice(2);
  if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) opt[k] = argv[++i];
  else opt[k] = true;
}
const num = (k, d) => (opt[k] === undefined ? d : Number(opt[k]));
const scenario = opt.scenario;
const url = new URL(opt['redis-url'] || 'redis://127.0.0.1:6379');
const connection = (name) => ({
  host: url.hostname, port: Number(url.port || 6379), maxRetriesPerRequest: null, connectionName: name,
});
const queueName = opt.queue || `qbench-${scenario}`;
const messages = num('messages', 10000);
const concurrency = num('concurrency', 1);
const inflight = num('inflight', 1);
const batch = num('batch', 1000);
const rate = num('rate', 1000);
const minDelay = num('min-delay-ms', 100);
const maxDelay = num('max-delay-ms', 10000);
const seconds = num('seconds', 10);
const timeoutS = num('timeout-s', 120);

// Wall clock in ms with sub-ms resolution; performance.timeOrigin is the process's wall-clock start,
// so two processes on one machine read the same clock (to well under a ms).
const wall = () => performance.timeOrigin + performance.now();
const mono = () => performance.now();
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; }; // this process, s
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (...a) => console.error('[bullmq]', ...a);

// ---- harness sync (--marks) -------------------------------------------------------------------
let stdinLines;
async function mark(at) {
  if (!opt.marks) return;
  if (!stdinLines) stdinLines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  process.stdout.write(JSON.stringify({ mark: at }) + '\n');
  await stdinLines.next();
}

function summary(lat, n) {
  if (n === 0) return { p50: null, p99: null, max: null, min: null, mean: null, count: 0 };
  const s = Float64Array.from(lat.subarray(0, n)).sort();
  const at = (q) => s[Math.min(n - 1, Math.floor(q * n))];
  let sum = 0;
  for (let i = 0; i < n; i++) sum += s[i];
  const r3 = (x) => Math.round(x * 1000) / 1000;
  return { p50: r3(at(0.5)), p99: r3(at(0.99)), max: r3(s[n - 1]), min: r3(s[0]), mean: r3(sum / n), count: n };
}

function result(o) {
  const base = {
    runner: 'bullmq', version: VERSION, scenario, messages: 0, errors: 0, elapsed_s: null,
    offers_per_s: null, deliveries_per_s: null, lateness_ms: null,
    settings: { concurrency, inflight, batch, rate, min_delay_ms: minDelay, max_delay_ms: maxDelay, queue: queueName },
  };
  process.stdout.write(JSON.stringify({ ...base, ...o }) + '\n');
}

// Issue `total` queue.add calls, at most `window` unanswered at once, and (if `perSec` > 0) no
// sooner than message i's slot t0 + i/perSec. makeJob(i, offerWall) -> [data, opts].
function offerPaced(queue, total, window, perSec, makeJob) {
  return new Promise((resolve) => {
    let sent = 0, open = 0, errors = 0, timer = null, lastDone = 0;
    const t0 = mono();
    const finish = () => resolve({ sent, errors, t0, t1: lastDone });
    const pump = () => {
      timer = null;
      const allowed = perSec > 0 ? Math.min(total, Math.floor(((mono() - t0) * perSec) / 1000) + 1) : total;
      while (sent < allowed && open < window) {
        const i = sent++;
        open++;
        const [data, opts] = makeJob(i, wall());
        queue.add('m', data, opts).then(null, (e) => {
          if (errors++ === 0) log('add failed:', e.message);
        }).finally(() => {
          open--;
          lastDone = mono();
          if (sent === total) { if (open === 0) finish(); } else if (!timer) pump();
        });
      }
      if (sent === total || open >= window) return; // a completion calls pump again
      // every allowed add is out, so the next slot is ahead: sleep (timers fire >= 1 ms apart,
      // so at high rates each wake-up sends the few adds that came due; no busy loop)
      timer = setTimeout(pump, Math.max(1, t0 + (sent * 1000) / perSec - mono()));
    };
    if (total === 0) finish(); else pump();
  });
}

async function addBulkInBatches(queue, total, size, makeJob) {
  let errors = 0;
  for (let i = 0; i < total; i += size) {
    const jobs = [];
    for (let j = i; j < Math.min(total, i + size); j++) {
      const [data, opts] = makeJob(j, wall());
      jobs.push({ name: 'm', data, opts });
    }
    try { await queue.addBulk(jobs); } catch (e) { if (errors === 0) log('addBulk failed:', e.message); errors += jobs.length; }
  }
  return errors;
}

const ready = () => [{}, {}];

// ---- scenarios --------------------------------------------------------------------------------
async function offer(bulk) {
  const queue = new Queue(queueName, { connection: connection('qbench-producer') });
  await queue.waitUntilReady();
  // warm-up on another queue: loads the add script and JITs the client path
  const warm = new Queue(queueName + '-warm', { connection: connection('qbench-warmup') });
  await offerPaced(warm, 200, Math.max(1, inflight), 0, ready);
  await addBulkInBatches(warm, 200, 100, ready);
  await warm.close();
  await mark('begin');
  const t0 = mono(), c0 = cpu();
  let errors;
  if (bulk) errors = await addBulkInBatches(queue, messages, batch, ready);
  else errors = (await offerPaced(queue, messages, Math.max(1, inflight), 0, ready)).errors;
  const secs = (mono() - t0) / 1000, used = cpu() - c0;
  await mark('end');
  await queue.close();
  result({ messages, errors, elapsed_s: secs, client_cpu_s: used, offers_per_s: (messages - errors) / secs, api: bulk ? `queue.addBulk x${batch}` : `queue.add, ${inflight} in flight` });
}

async function deliver() {
  const queue = new Queue(queueName, { connection: connection('qbench-producer') });
  const preloadErrors = await addBulkInBatches(queue, messages, 1000, ready); // ready (delay 0) before the clock starts
  const expect = messages - preloadErrors;
  let completed = 0, failed = 0, done;
  const finished = new Promise((r) => (done = r));
  const worker = new Worker(queueName, async () => {}, { connection: connection('qbench-worker'), concurrency, autorun: false, name: 'qbench' });
  worker.on('completed', () => { if (++completed + failed === expect) done(); });
  worker.on('failed', () => { if (completed + ++failed === expect) done(); });
  worker.on('error', (e) => log('worker error:', e.message));
  await worker.waitUntilReady();
  await mark('begin');
  const t0 = mono(), c0 = cpu();
  worker.run().catch((e) => log('run:', e.message));
  const timedOut = await Promise.race([finished.then(() => false), sleep(timeoutS * 1000).then(() => true)]);
  const secs = (mono() - t0) / 1000, used = cpu() - c0;
  await mark('end');
  await worker.close();
  await queue.close();
  result({
    messages: expect, errors: preloadErrors + failed + (timedOut ? expect - completed - failed : 0), elapsed_s: secs, client_cpu_s: used,
    deliveries_per_s: completed / secs, completed,
  });
}

// Lateness: this process offers, a forked child (same file, --role consumer) runs the Worker, so
// the producer's event loop cannot delay the handler.
async function lateness() {
  const total = messages;
  const child = fork(fileURLToPath(import.meta.url), [...argv, '--role', 'consumer'], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const fromChild = (type) => new Promise((r) => { const f = (m) => { if (m.type === type) { child.off('message', f); r(m); } }; child.on('message', f); });
  await fromChild('ready');
  const queue = new Queue(queueName, { connection: connection('qbench-producer') });
  await queue.waitUntilReady();
  const span = maxDelay - minDelay;
  const job = (i, offered) => {
    const delay = Math.round(minDelay + Math.random() * span);
    return [{ due: offered + delay }, { delay }];
  };
  await mark('begin');
  child.send({ type: 'begin' });
  const t0 = mono(), c0 = cpu();
  const p = await offerPaced(queue, total, Math.max(1, inflight), rate, job);
  const offerSecs = (p.t1 - p.t0) / 1000;
  const got = fromChild('summary');
  child.send({ type: 'expect', n: total - p.errors });
  const s = await Promise.race([got, sleep(maxDelay + timeoutS * 1000).then(() => { child.send({ type: 'stop' }); return got; })]);
  const secs = (mono() - t0) / 1000, used = cpu() - c0 + s.cpu_s;
  await mark('end');
  const exited = new Promise((r) => child.once('exit', r));
  child.send({ type: 'exit' });
  await queue.close();
  await Promise.race([exited, sleep(10000)]);
  result({
    messages: total, errors: p.errors + s.failed + (total - p.errors - s.handled), elapsed_s: secs, client_cpu_s: used, producer_cpu_s: used - s.cpu_s, consumer_cpu_s: s.cpu_s,
    offers_per_s: (total - p.errors) / offerSecs, offered_rate_target: rate, lateness_ms: s.lateness,
    deliveries_per_s: null, completed: s.completed,
  });
}

async function consumer() {
  const lat = new Float64Array(messages);
  let handled = 0, completed = 0, failed = 0, expect = Infinity, sent = false, c0 = cpu();
  const report = () => {
    if (sent) return;
    sent = true;
    process.send({ type: 'summary', handled, completed, failed, cpu_s: cpu() - c0, lateness: summary(lat, Math.min(handled, lat.length)) });
  };
  const worker = new Worker(queueName, async (job) => {
    const now = wall(); // handler start
    if (handled < lat.length) lat[handled] = now - job.data.due;
    handled++;
  }, { connection: connection('qbench-worker'), concurrency, name: 'qbench' });
  const check = () => { if (completed + failed >= expect) report(); };
  worker.on('completed', () => { completed++; check(); });
  worker.on('failed', () => { failed++; check(); });
  worker.on('error', (e) => log('worker error:', e.message));
  process.on('message', async (m) => {
    if (m.type === 'begin') c0 = cpu();
    else if (m.type === 'expect') { expect = m.n; check(); } else if (m.type === 'stop') report();
    else if (m.type === 'exit') { await worker.close(); process.exit(0); }
  });
  await worker.waitUntilReady();
  process.send({ type: 'ready' });
}

// Idle: one Worker (concurrency C) on an empty queue for --seconds; the harness counts what it sends.
// --idle-delayed-ms D: the queue holds one job due in D ms instead (nothing ready, one delayed).
async function idle() {
  if (opt['idle-delayed-ms'] !== undefined) {
    const queue = new Queue(queueName, { connection: connection('qbench-producer') });
    await queue.add('m', {}, { delay: num('idle-delayed-ms', 3600000) });
    await queue.close();
  }
  const worker = new Worker(queueName, async () => {}, { connection: connection('qbench-worker'), concurrency, name: 'qbench' });
  worker.on('error', (e) => log('worker error:', e.message));
  await worker.waitUntilReady();
  await sleep(1000); // let start-up commands (script loads, first stalled check) pass
  await mark('begin');
  const t0 = mono(), c0 = cpu();
  await sleep(seconds * 1000);
  const secs = (mono() - t0) / 1000, used = cpu() - c0;
  await mark('end');
  await worker.close();
  result({ messages: 0, errors: 0, elapsed_s: secs, client_cpu_s: used });
}

const scenarios = { offer: () => offer(false), 'offer-bulk': () => offer(true), deliver, lateness, idle };
const main = opt.role === 'consumer' ? consumer : scenarios[scenario];
if (!main) {
  result({ unsupported: true });
} else {
  main().then(() => { if (opt.role !== 'consumer') process.exit(0); }, (e) => { log(e.stack || e); process.exit(1); });
}
