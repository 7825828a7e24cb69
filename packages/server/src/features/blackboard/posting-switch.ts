import type { Sequelize } from 'sequelize';
import type { PostingState } from '@svc/schemas';
import { selectRows } from './sql.ts';

/** How long a replica trusts its copy of the switch; a change made elsewhere shows within this. */
const CACHE_MS = 1_000;

/**
 * The operator's posting switch, kept in the database so every replica obeys it. Reads cache
 * it briefly; a change through this replica is seen at once.
 */
export class PostingSwitch {
  private cached: { state: PostingState; at: number } | undefined;
  private readonly sequelize: Sequelize;

  constructor(sequelize: Sequelize) {
    this.sequelize = sequelize;
  }

  async get(): Promise<PostingState> {
    if (this.cached && Date.now() - this.cached.at < CACHE_MS) return this.cached.state;
    const [row] = await selectRows<{ posting_enabled: boolean; posting_reason: string | null }>(
      this.sequelize,
      'SELECT posting_enabled, posting_reason FROM blackboard_settings WHERE id = 1',
      {},
    );
    const state = { enabled: row?.posting_enabled ?? true, reason: row?.posting_reason ?? null };
    this.cached = { state, at: Date.now() };
    return state;
  }

  async set(enabled: boolean, reason: string | null): Promise<PostingState> {
    await this.sequelize.query(
      `INSERT INTO blackboard_settings (id, posting_enabled, posting_reason, updated_at) VALUES (1, :enabled, :reason, now())
       ON CONFLICT (id) DO UPDATE SET posting_enabled = EXCLUDED.posting_enabled, posting_reason = EXCLUDED.posting_reason, updated_at = now()`,
      { replacements: { enabled, reason } },
    );
    const state = { enabled, reason };
    this.cached = { state, at: Date.now() };
    return state;
  }
}
