/**
 * How a bench hands its figures to `pnpm bench` (bench/run.ts): each bench calls `reportFigures`
 * once it has measured. Run alone (`pnpm bench:x`) this writes nothing; under the runner, which
 * sets SVC_BENCH_REPORT to a file, each figure is appended to it as one JSON line, so the runner
 * can build one table and `bench/results/latest.json` from every bench without parsing the
 * human-readable lines the benches print.
 */
import { appendFileSync } from 'node:fs';
import { loadavg } from 'node:os';

/** A target on a figure: the ratio (svc over baseline, higher is better) or svc's own value. */
export interface Target {
  /** Which number the target is on. */
  on: 'ratio' | 'svc';
  /** `>=` for a floor (throughput ratios), `<` for a ceiling (latency, memory). */
  op: '>=' | '<';
  value: number;
}

export interface Figure {
  /** What is measured, short: "get, 16 connections", "idle RSS". */
  figure: string;
  /** svc's number in `unit` (requests/s, ms, MiB...). */
  svc: number;
  /** The baseline's number in the same unit, where there is one. */
  baseline?: number;
  unit: string;
  /**
   * svc relative to the baseline, as the bench defines it (the median of per-pair ratios, not
   * svc / baseline of the medians), oriented so that higher is better.
   */
  ratio?: number;
  target?: Target;
  /** One line the table prints under the figure: CPU per request, rounds, spread. */
  note?: string;
}

export interface ReportedFigure extends Figure {
  bench: string;
  met?: boolean;
  /** Load averages (1, 5, 15 min) when the figure was reported. */
  load: number[];
}

/** Whether the figure meets its target; undefined when it has none. */
export function meetsTarget(figure: Figure): boolean | undefined {
  const { target } = figure;
  if (!target) return undefined;
  const value = target.on === 'ratio' ? figure.ratio : figure.svc;
  if (value === undefined || !Number.isFinite(value)) return false;
  return target.op === '>=' ? value >= target.value : value < target.value;
}

export function describeTarget(target: Target | undefined, unit: string): string {
  if (!target) return '-';
  return target.on === 'ratio' ? `${target.op} ${target.value}x` : `${target.op} ${target.value} ${unit}`;
}

/** Hands the bench's figures to the runner (when one is listening) and returns them as reported. */
export function reportFigures(bench: string, figures: Figure[]): ReportedFigure[] {
  const load = loadavg().map((value) => Number(value.toFixed(2)));
  const reported = figures.map((figure) => ({ bench, ...figure, met: meetsTarget(figure), load }));
  const file = process.env.SVC_BENCH_REPORT;
  if (file) appendFileSync(file, reported.map((figure) => `${JSON.stringify(figure)}\n`).join(''));
  return reported;
}
