/**
 * The default period of the slow polls kept behind notifications (the job queue's
 * `SVC_JOBS_POLL_INTERVAL_MS`, the task store's `SVC_TASKS_BACKSTOP_MS`). Idle, each turn is one
 * read per queue, and it is all the database work an idle server does (issue 42).
 *
 * - PostgreSQL, 10 s: other replicas may die holding leases, and nothing announces that; a dead
 *   replica's work is taken up at most a lease (30 s by default) plus this after its last renewal.
 * - The embedded database, 60 s: this process is the only replica (the data directory is locked).
 *   The leases a dead process left are all run out one lease after this start, and a first
 *   backstop comes then (`Wake`'s `firstBackstopMs`, `firstBackstopDelayMs`); after that a lease
 *   runs out only when this process's own renewals failed (its database unreachable), and the
 *   backstop bounds how late that work runs again.
 */
export function backstopDefaultMs(databaseUrl: string | undefined): number {
  return databaseUrl ? 10_000 : 60_000;
}

/**
 * When the first backstop after a start comes on the embedded database: once every lease taken
 * before the start has run out (a lease is renewed at a third of its length, so none lasts longer
 * than `leaseSeconds` past the previous process's death), and a second later, for clock steps.
 */
export function firstBackstopDelayMs(leaseSeconds: number): number {
  return leaseSeconds * 1000 + 1000;
}
