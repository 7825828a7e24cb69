import test from 'ava';
import { isoOfMillis } from '../src/features/blackboard/iso-millis.ts';

const viaDate = (ms: number) => new Date(ms).toISOString();

test('isoOfMillis writes what toISOString writes at month, year, leap-day and range edges', (t) => {
  const edges = [
    0,
    -1,
    86_399_999,
    Date.UTC(2000, 1, 29, 23, 59, 59, 999),
    Date.UTC(2100, 2, 1),
    Date.UTC(1900, 1, 28, 12),
    Date.UTC(2026, 11, 31, 23, 59, 59, 9),
    -62_135_596_800_000, // 0001-01-01
    -62_135_596_800_001, // the last millisecond of year 0: toISOString's own form
    253_402_300_799_999, // 9999-12-31T23:59:59.999Z
    253_402_300_800_000, // +010000-01-01
    -8_640_000_000_000_000,
    8_640_000_000_000_000,
  ];
  for (const ms of edges) t.is(isoOfMillis(ms), viaDate(ms), String(ms));
});

test('isoOfMillis agrees with toISOString on random instants across years 1-9999', (t) => {
  // A seeded generator, so a failure names an instant that fails again.
  let seed = 0x2545f491;
  const next = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  const low = -62_135_596_800_000;
  const span = 253_402_300_800_000 - low;
  for (let index = 0; index < 200_000; index++) {
    const ms = Math.floor(low + next() * span);
    if (isoOfMillis(ms) !== viaDate(ms)) return t.fail(`${ms}: ${isoOfMillis(ms)} != ${viaDate(ms)}`);
  }
  t.pass();
});

test('isoOfMillis leaves a fractional millisecond to toISOString', (t) => {
  t.is(isoOfMillis(1_795_000_000_123.4), viaDate(1_795_000_000_123.4));
});
