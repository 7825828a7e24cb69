import type { Sequelize, Transaction } from 'sequelize';

export interface MigrationContext {
  sequelize: Sequelize;
  /** Every statement of a run shares this transaction (and its migration lock). */
  transaction: Transaction;
}

export interface Migration {
  /** Timestamped file name without extension: `20261121T1200-foundation`. Order is by name. */
  name: string;
  up(context: MigrationContext): Promise<void>;
  down(context: MigrationContext): Promise<void>;
  /** The statements of a migration written as SQL: what the migrated template is checked against (migrated-template.ts). */
  sql?: { up: readonly string[]; down: readonly string[] };
}

/** A migration written as SQL; statements run in order inside the run's transaction. */
export function sqlMigration(name: string, up: string[], down: string[]): Migration {
  const run =
    (statements: string[]) =>
    async ({ sequelize, transaction }: MigrationContext) => {
      for (const statement of statements) await sequelize.query(statement, { transaction });
    };
  return { name, up: run(up), down: run(down), sql: { up, down } };
}
