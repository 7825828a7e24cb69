import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

/**
 * Collects positional parameters while a read is written, so dynamic filters never splice values
 * into SQL. Its statements run through the driver (queryPrepared, queryPositional), not
 * `sequelize.query`: a named prepared statement takes `$n`.
 */
export class SqlParams {
  readonly values: unknown[] = [];

  /** Adds a value and answers its placeholder (`$3`). */
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

export async function selectRows<T extends object>(
  sequelize: Sequelize,
  sql: string,
  replacements: Record<string, unknown>,
  transaction?: Transaction,
): Promise<T[]> {
  return sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT, transaction });
}

/** ISO text of a timestamp column, whatever form the driver returned it in. */
export function isoOf(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}
