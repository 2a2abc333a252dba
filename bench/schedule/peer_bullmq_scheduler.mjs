// BullMQ's worker for bench/schedule (bench/schedule/README.md): upserts one
// job scheduler (every --every-ms) and processes its jobs until killed, one
// line per run:
//   <tick ms> <start: wall clock ms, 3 decimals> <pid> <attempt>
//   node peer_bullmq_scheduler.mjs --redis-url redis://127.0.0.1:PORT --log FILE [--every-ms 100]
// The tick is the scheduler's time for the job (its id: repeat:<scheduler>:<ms>).
// BullMQ settings: documented defaults (Worker: lockDuration 30 s, stalledInterval 30 s), concurrency 1,
// maxRetriesPerRequest: null on the ioredis connection (BullMQ requires it for workers).
import { appendFileSync, openSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Queue, Worker } from 'bullmq';

const argv = process.argv.slice(2);
const opt = {};
for (let i = 0; i + 1 < argv.length; i += 2) opt[argv[i].replace(/^--/, '')] = argv[i + 1];
const url = new URL(opt['redis-url']);
const every = Number(opt['every-ms'] || 100);
const connection = { host: url.hostname, port: Number(url.port), maxRetriesPerRequest: null };
const log = openSync(opt.log, 'a');
const wall = () => performance.timeOrigin + performance.now();

const queue = new Queue('sbench', { connection });
await queue.upsertJobScheduler('bench-tick', { every }, { name: 'tick', data: {} });
new Worker('sbench', async (job) => {
  const start = wall();
  const tick = Number(String(job.id).split(':').pop());
  appendFileSync(log, `${tick} ${start.toFixed(3)} ${process.pid} ${job.attemptsMade + 1}\n`);
}, { connection, concurrency: 1 });
