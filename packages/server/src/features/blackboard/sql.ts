import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

/** Collects bind parameters while a statement is written, so dynamic filters never splice values into SQL. */
export class SqlParams {
  readonly values: unknown[] = [];

  /** Adds a value and answers its placeholder (`$3`). */
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

export async function selectRows<T extends object>(sequelize: Sequelize, sql: string, bind: unknown[], transaction?: Transaction): Promise<T[]> {
  return sequelize.query<T>(sql, { bind, type: QueryTypes.SELECT, transaction });
}

/** ISO text of a timestamp column, whatever form the driver returned it in. */
export function isoOf(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

/** `%`, `_` and `\` match themselves in an ILIKE pattern built from user text. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}
