/**
 * Background responses against the foreground (issue 43): the latency a background response adds
 * to reaching `completed` (create, then poll `GET /v1/responses/{id}` every 2 ms) over the same
 * call answered in the foreground, and the cost of one poll. One in-process server on the embedded
 * database, the built-in chat model (no upstream), plain `fetch`. `--credential key` (the default)
 * calls with a developer key, the path users take; `operator` with the operator token. Figures are
 * medians over `--runs` (default 40) after 5 warm-up calls; the load average is printed beside
 * them, since the machine is shared. Not yet wired to `pnpm bench` and /.well-known/performance.json.
 *
 *   pnpm exec node bench/responses-background.ts [--runs 40] [--credential key|operator]
 */
import { loadavg } from 'node:os';
import { reportFigures } from './report.ts';
import { createKey, signInAgent } from '@svc/testing/identity';
import { startTestServer } from '@svc/testing/test-server';
import { median, percentile } from './stats.ts';

const runsFlag = process.argv.indexOf('--runs');
const runs = runsFlag > 0 ? Number(process.argv[runsFlag + 1]) : 40;
const credentialFlag = process.argv.indexOf('--credential');
const credential = credentialFlag > 0 ? process.argv[credentialFlag + 1] : 'key';
if (credential !== 'key' && credential !== 'operator') throw new Error(`--credential is key or operator, not ${credential}`);
const svc = await startTestServer({});
const token = credential === 'operator' ? svc.operatorToken : (await createKey((await signInAgent(svc)).client, ['inference:invoke'], 'bench')).secret;
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
type Answer = { id: string; status: string };
const client = {
  responses: {
    create: async (request: Record<string, unknown>): Promise<Answer> =>
      (await fetch(`${svc.baseUrl}/v1/responses`, { method: 'POST', headers, body: JSON.stringify(request) })).json() as Promise<Answer>,
    retrieve: async (id: string): Promise<Answer> => (await fetch(`${svc.baseUrl}/v1/responses/${id}`, { headers })).json() as Promise<Answer>,
  },
};
const body = { model: 'svc-extractive-chat', input: 'How do I post on the blackboard?' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function foreground(): Promise<number> {
  const started = performance.now();
  const answer = await client.responses.create(body);
  if (answer.status !== 'completed') throw new Error(`foreground ended ${answer.status}`);
  return performance.now() - started;
}

let polls = 0;
async function background(): Promise<number> {
  const started = performance.now();
  const created = await client.responses.create({ ...body, background: true });
  for (;;) {
    polls++;
    const polled = await client.responses.retrieve(created.id);
    if (polled.status === 'completed') return performance.now() - started;
    if (polled.status !== 'in_progress' && polled.status !== 'queued') throw new Error(`background ended ${polled.status}`);
    await sleep(2);
  }
}

try {
  for (let index = 0; index < 5; index++) await Promise.all([foreground(), background()]);
  const fg: number[] = [];
  const bg: number[] = [];
  polls = 0;
  // Interleaved, so both see the same load.
  for (let index = 0; index < runs; index++) {
    fg.push(await foreground());
    bg.push(await background());
  }
  const pollsPerTask = polls / runs;
  // The cost of one poll: a finished background response read again, many times.
  const done = await client.responses.create({ ...body, background: true });
  while ((await client.responses.retrieve(done.id)).status !== 'completed') await sleep(2);
  const pollTimes: number[] = [];
  const cpuBefore = process.cpuUsage();
  for (let index = 0; index < runs * 10; index++) {
    const started = performance.now();
    await client.responses.retrieve(done.id);
    pollTimes.push(performance.now() - started);
  }
  const cpu = process.cpuUsage(cpuBefore);
  const cpuPerPollMs = (cpu.user + cpu.system) / 1000 / (runs * 10);
  const figures = {
    runs,
    credential,
    load_average: loadavg().map((value) => Number(value.toFixed(2))),
    foreground_median_ms: Number(median(fg).toFixed(2)),
    background_to_completed_median_ms: Number(median(bg).toFixed(2)),
    added_median_ms: Number((median(bg) - median(fg)).toFixed(2)),
    background_p90_ms: Number(percentile(bg, 90).toFixed(2)),
    polls_per_task: Number(pollsPerTask.toFixed(1)),
    poll_median_ms: Number(median(pollTimes).toFixed(3)),
    poll_process_cpu_ms: Number(cpuPerPollMs.toFixed(3)),
    target: 'added median < 50 ms at idle',
  };
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
  reportFigures('responses-background', [
    {
      figure: 'added to completed, background over foreground (median)',
      svc: figures.added_median_ms,
      unit: 'ms',
      target: { on: 'svc', op: '<', value: 50 },
      note: `${credential === 'key' ? 'developer key' : 'operator token'}: foreground ${figures.foreground_median_ms} ms, background ${figures.background_to_completed_median_ms} ms, ${runs} runs`,
    },
    {
      figure: 'polls per task',
      svc: figures.polls_per_task,
      unit: 'polls',
      note: `one poll ${figures.poll_median_ms} ms, ${figures.poll_process_cpu_ms} ms process CPU`,
    },
  ]);
} finally {
  await svc.close();
}
