import test from 'ava';
import { anonymousPrincipal } from '@svc/schemas';
import { ToolCatalogue } from '../src/features/mcp/index.ts';

const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

// Each test file runs in a process of its own, so nothing here has rendered the contract's tools before.
test('a ToolCatalogue renders the tools on first use, not when made (the server makes two at start: issue 42 cold start)', (t) => {
  let since = process.cpuUsage();
  const catalogue = new ToolCatalogue();
  const made = cpuMs(since);
  since = process.cpuUsage();
  const listed = catalogue.listFor(anonymousPrincipal);
  const firstUse = cpuMs(since);
  t.true(listed.length > 0);
  t.is(catalogue.find(listed[0]!.name)?.name, listed[0]!.name);
  // Rendering every tool's JSON Schemas takes tens to hundreds of ms; making the catalogue, almost nothing.
  t.true(made * 20 < firstUse, `made in ${made.toFixed(2)} ms, first use ${firstUse.toFixed(2)} ms`);
  // Once rendered, it is not rendered again.
  since = process.cpuUsage();
  t.deepEqual(catalogue.listFor(anonymousPrincipal), listed);
  t.true(cpuMs(since) * 5 < firstUse);
});
