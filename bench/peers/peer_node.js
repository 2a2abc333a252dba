// Node peer drivers (ioredis clients):
//   lib=semaphore  redis-semaphore Mutex (RedlockMutex for workload=redlock)
//   lib=redlock    @sesamecare-oss/redlock using() (redlock v5 API)
// Usage: node peer_node.js lib=... workload=... ports=P[,P,P] ...   Prints JSON lines.
// Settings (also copied into the report by peers.py):
'use strict';
const Redis = require('ioredis');
const { Mutex, RedlockMutex } = require('redis-semaphore');
const { Redlock } = require('@sesamecare-oss/redlock');

const a = Object.fromEntries(process.argv.slice(2).filter((x) => x.includes('=')).map((x) => [x.slice(0, x.indexOf('=')), x.slice(x.indexOf('=') + 1)]));
const wl = a.workload, lib = a.lib;
const ports = a.ports.split(',').map(Number);
const num = (k, d) => (a[k] === undefined ? d : Number(a[k]));
const clients = ports.map((port) => new Redis({ host: '127.0.0.1', port }));
const ns = () => Number(process.hrtime.bigint()); // uv_hrtime: CLOCK_MONOTONIC
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
const contender = lib === 'semaphore' ? 'redis-semaphore' : 'redlock';
const emit = (o) => process.stdout.write(JSON.stringify({ contender, workload: wl, ...o }) + '\n');

async function commands() {
  const info = await clients[0].info('commandstats');
  let total = 0, scripts = 0; // all calls except INFO; EVAL/EVALSHA/FCALL calls (= requests)
  for (const m of info.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)) {
    if (m[1] !== 'info') total += Number(m[2]);
    if (m[1].startsWith('eval') || m[1].startsWith('fcall')) scripts += Number(m[2]);
  }
  return [total, scripts];
}

// Documented defaults except where a workload needs otherwise (noted in the report).
const redlock = new Redlock(clients, {
  driftFactor: 0.01, retryCount: -1, retryDelay: 200, retryJitter: 200,
  automaticExtensionThreshold: num('threshold_ms', 500),
});

// One acquire + hold + release; returns [acquired_ns, released_ns].
async function once(key, opts, holdUs) {
  const asked = ns();
  if (lib === 'semaphore') {
    const m = wl === 'redlock' ? new RedlockMutex(clients, key, opts) : new Mutex(clients[0], key, opts);
    await m.acquire();
    const t = ns();
    if (holdUs) await sleep(holdUs / 1000);
    const r = ns();
    await m.release();
    return [t, r, asked];
  }
  let t, r;
  await redlock.using([key], opts.lockTimeout, async () => {
    t = ns();
    if (holdUs) await sleep(holdUs / 1000);
    r = ns();
  });
  return [t, r, asked];
}

async function main() {
  if (wl === 'uncontended' || wl === 'redlock') {
    const n = num('n', 5000), base = num('base', 0);
    const opts = { lockTimeout: 10000, refreshInterval: 0 }; // fixed 10 s lease like the others
    for (let i = 0; i < 200; i++) await once(`peers:node:${base - 1 - i}`, opts, 0);
    const lat = [];
    const t0 = ns();
    for (let i = 0; i < n; i++) {
      const s = ns();
      await once(`peers:node:${base + i}`, opts, 0);
      lat.push(ns() - s);
    }
    emit({ n, secs: (ns() - t0) / 1e9, lat_ns: lat });
  } else if (wl === 'contended') {
    const until = ns() + num('ms', 3000) * 1e6, hold = num('hold_us', 1000);
    // redis-semaphore: default retryInterval 10 ms; acquireTimeout raised so no waiter gives up.
    const opts = { lockTimeout: 10000, acquireTimeout: 600000, refreshInterval: 0 };
    const iv = [];
    while (ns() < until) iv.push(await once('peers:node:hot', opts, hold));
    emit({ worker: num('worker', 0), intervals: iv });
  } else if (wl === 'holders') {
    const leases = num('leases', 1000), leaseMs = num('lease_ms', 3000), renewMs = num('renew_ms', 1000), ms = num('ms', 10000);
    let release;
    const done = new Promise((r) => (release = r));
    const held = [];
    let acquired = 0, allIn;
    const allAcquired = new Promise((r) => (allIn = r));
    for (let i = 0; i < leases; i++) {
      if (lib === 'semaphore') {
        const m = new Mutex(clients[0], `peers:node:hold:${i}`, { lockTimeout: leaseMs, refreshInterval: renewMs });
        held.push(m.acquire().then(() => { if (++acquired === leases) allIn(); return done; }).then(() => m.release()));
      } else {
        held.push(redlock.using([`peers:node:hold:${i}`], leaseMs, async () => { if (++acquired === leases) allIn(); await done; }));
      }
    }
    await allAcquired;
    const c0 = await commands(), cpu0 = cpu();
    await sleep(ms);
    const used = cpu() - cpu0, c1 = await commands();
    release();
    await Promise.all(held);
    emit({ leases, secs: ms / 1000, commands: c1[0] - c0[0], scripts: c1[1] - c0[1], cpu_s: used });
  } else {
    process.exitCode = 2;
  }
}

main().then(() => clients.forEach((c) => c.disconnect()), (e) => { console.error(e); process.exit(1); });
