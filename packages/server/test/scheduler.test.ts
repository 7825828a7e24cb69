import { execFile } from 'node:child_process';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import test from 'ava';
import pino from 'pino';
import { Scheduler } from '../src/scheduler.ts';

/** A logger whose records the test can read. */
function recordingLogger() {
  const records: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      records.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level: 'debug' }, sink), records };
}

async function until(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

test('a task runs at every turn until the scheduler closes, and not after', async (t) => {
  const scheduler = new Scheduler(recordingLogger().log);
  let runs = 0;
  scheduler.every('count', 10, async () => {
    runs++;
  });
  await until(() => runs >= 3, 'three runs');
  await scheduler.close();
  const atClose = runs;
  await sleep(60);
  t.is(runs, atClose);
  t.throws(() => scheduler.every('late', 10, async () => {}), { message: /closed.*"late"/ });
});

test('a task scheduled once runs once after its delay, and not at all when the scheduler closes first', async (t) => {
  const scheduler = new Scheduler(recordingLogger().log);
  let runs = 0;
  scheduler.once('first', 10, async () => {
    runs++;
  });
  await until(() => runs === 1, 'the run');
  await sleep(60);
  t.is(runs, 1);
  let cancelled = 0;
  scheduler.once('never', 30, async () => {
    cancelled++;
  });
  await scheduler.close();
  await sleep(60);
  t.is(cancelled, 0);
  t.throws(() => scheduler.once('late', 10, async () => {}), { message: /closed.*"late"/ });
});

test('a task still running at its next turn skips that turn instead of overlapping itself', async (t) => {
  const scheduler = new Scheduler(recordingLogger().log);
  let running = 0;
  let mostAtOnce = 0;
  let finished = 0;
  scheduler.every('slow', 5, async () => {
    running++;
    mostAtOnce = Math.max(mostAtOnce, running);
    await sleep(40);
    running--;
    finished++;
  });
  await until(() => finished >= 2, 'two slow runs');
  await scheduler.close();
  t.is(mostAtOnce, 1);
});

test('a failure is logged with the task name and the task runs again at its next turn', async (t) => {
  const { log, records } = recordingLogger();
  const scheduler = new Scheduler(log);
  let attempts = 0;
  scheduler.every('flaky.prune', 10, async () => {
    attempts++;
    if (attempts === 1) throw new Error('database went away');
  });
  await until(() => attempts >= 2, 'a second attempt');
  await scheduler.close();
  const failure = records.find((record) => record.task === 'flaky.prune');
  t.truthy(failure, 'the failure names its task');
  t.is(failure?.level, 40);
  t.is((failure?.err as { message?: string } | undefined)?.message, 'database went away');
  t.regex(String(failure?.msg), /flaky\.prune failed/);
});

test('close waits for the task running now', async (t) => {
  const scheduler = new Scheduler(recordingLogger().log);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let started = false;
  let finished = false;
  scheduler.every('held', 5, async () => {
    started = true;
    await released;
    finished = true;
  });
  await until(() => started, 'the task to start');
  let closed = false;
  const closing = scheduler.close().then(() => (closed = true));
  await sleep(30);
  t.false(closed, 'close returned while the task was running');
  release();
  await closing;
  t.true(finished);
});

test('its timers do not keep a process alive', async (t) => {
  // A process whose only work is a scheduled task exits on its own.
  const moduleUrl = new URL('../src/scheduler.ts', import.meta.url).href;
  const program = `import { Scheduler } from ${JSON.stringify(moduleUrl)}; import pino from 'pino'; new Scheduler(pino({ level: 'silent' })).every('idle', 20, async () => {}); console.log('scheduled');`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', program], {
    cwd: new URL('..', import.meta.url),
    timeout: 20_000,
  });
  t.is(stdout.trim(), 'scheduled');
});
