import { QueryTypes, type Sequelize } from 'sequelize';
import type { ResponseInputItemList, ResponseObject } from '@svc/schemas';
import { ServiceError } from '../../service-error.ts';
import type { ConversationItem } from './translation/index.ts';
import type { ResponsesConfig } from './responses-config.ts';

/** A stored response: the answer, the request's own input, and the conversation the model saw before it. */
export interface StoredResponse {
  response: ResponseObject;
  inputItems: ConversationItem[];
  context: ConversationItem[];
}

export interface InputItemsPage {
  after?: string;
  before?: string;
  limit: number;
  order: 'asc' | 'desc';
}

export const responseNotFound = (id: string) =>
  new ServiceError('response_not_found', `No stored response "${id}" for this caller (unknown, deleted, another principal's, or past its retention).`);

/**
 * Stored responses in the database, each owned by one principal key. A row past its retention is
 * invisible at once (every read compares `created_at` with the setting in force) and deleted by
 * `sweep` later; another owner's row reads as not found, never as forbidden.
 */
export class ResponseStore {
  readonly #sequelize: Sequelize;
  readonly #config: ResponsesConfig;

  constructor(sequelize: Sequelize, config: ResponsesConfig) {
    this.#sequelize = sequelize;
    this.#config = config;
  }

  get #fresh(): string {
    return `created_at > clock_timestamp() - make_interval(days => ${this.#config.retentionDays})`;
  }

  /** `responseJson`, `inputItemsJson`: the JSON texts, when the caller has them already (a stream's terminal event, the measured input). */
  async save(
    owner: string,
    stored: StoredResponse,
    responseJson = JSON.stringify(stored.response),
    inputItemsJson = JSON.stringify(stored.inputItems),
  ): Promise<void> {
    await this.#sequelize.query(
      'INSERT INTO responses (id, owner, model, response, input_items, context, created_at) VALUES (:id, :owner, :model, :response, :inputItems, :context, clock_timestamp())',
      {
        replacements: {
          id: stored.response.id,
          owner,
          model: stored.response.model,
          response: responseJson,
          inputItems: inputItemsJson,
          context: JSON.stringify(stored.context),
        },
      },
    );
  }

  /** The owner's stored response, or `response_not_found`. */
  async get(owner: string, id: string): Promise<StoredResponse> {
    const [row] = await this.#sequelize.query<{ response: ResponseObject; input_items: ConversationItem[]; context: ConversationItem[] }>(
      `SELECT response, input_items, context FROM responses WHERE id = :id AND owner = :owner AND ${this.#fresh}`,
      { replacements: { id, owner }, type: QueryTypes.SELECT },
    );
    if (!row) throw responseNotFound(id);
    return { response: row.response, inputItems: row.input_items, context: row.context };
  }

  /**
   * The owner's stored response object alone (`GET /v1/responses/{id}`): the conversation it
   * continued and its input stay in the database, so a read parses only the answer.
   */
  async response(owner: string, id: string): Promise<ResponseObject> {
    const [row] = await this.#sequelize.query<{ response: ResponseObject }>(
      `SELECT response FROM responses WHERE id = :id AND owner = :owner AND ${this.#fresh}`,
      { replacements: { id, owner }, type: QueryTypes.SELECT },
    );
    if (!row) throw responseNotFound(id);
    return row.response;
  }

  /** Whether the owner still has this stored response (fresh, not deleted). */
  async has(owner: string, id: string): Promise<boolean> {
    const rows = await this.#sequelize.query(`SELECT 1 FROM responses WHERE id = :id AND owner = :owner AND ${this.#fresh}`, {
      replacements: { id, owner },
      type: QueryTypes.SELECT,
    });
    return rows.length > 0;
  }

  /** The size of the owner's stored response, read before the row itself (`response_not_found` as `get`). */
  async size(owner: string, id: string): Promise<number> {
    const [row] = await this.#sequelize.query<{ bytes: number }>(
      `SELECT (octet_length(response::text) + octet_length(input_items::text) + octet_length(context::text))::int AS bytes FROM responses WHERE id = :id AND owner = :owner AND ${this.#fresh}`,
      { replacements: { id, owner }, type: QueryTypes.SELECT },
    );
    if (!row) throw responseNotFound(id);
    return row.bytes;
  }

  async delete(owner: string, id: string): Promise<void> {
    const [rows] = (await this.#sequelize.query(`DELETE FROM responses WHERE id = :id AND owner = :owner AND ${this.#fresh} RETURNING id`, {
      replacements: { id, owner },
    })) as [unknown[], unknown];
    if (rows.length === 0) throw responseNotFound(id);
  }

  /** One page of a stored response's input items, OpenAI's way: `after`/`before` name an item id, `order` desc lists the last item first. */
  async inputItems(owner: string, id: string, page: InputItemsPage): Promise<ResponseInputItemList> {
    const [row] = await this.#sequelize.query<{ input_items: ConversationItem[] }>(
      `SELECT input_items FROM responses WHERE id = :id AND owner = :owner AND ${this.#fresh}`,
      {
        replacements: { id, owner },
        type: QueryTypes.SELECT,
      },
    );
    if (!row) throw responseNotFound(id);
    const items = page.order === 'desc' ? [...row.input_items].reverse() : row.input_items;
    const position = (itemId: string, field: 'after' | 'before') => {
      const index = items.findIndex((item) => item.id === itemId);
      if (index < 0)
        throw new ServiceError('validation_failed', `Invalid request: query.${field}: no input item "${itemId}" in this response`, {
          detail: [{ loc: ['query', field], msg: 'not an item of this response', type: 'value_error' }],
        });
      return index;
    };
    const start = page.after !== undefined ? position(page.after, 'after') + 1 : 0;
    const end = page.before !== undefined ? position(page.before, 'before') : items.length;
    const data = items.slice(start, Math.max(start, Math.min(end, start + page.limit)));
    return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: start + data.length < end };
  }

  /** Deletes rows past their retention, a bounded batch a turn (the next turn takes the rest). */
  async sweep(): Promise<void> {
    await this.#sequelize.query(
      `DELETE FROM responses WHERE id IN (SELECT id FROM responses WHERE created_at <= clock_timestamp() - make_interval(days => ${this.#config.retentionDays}) LIMIT 5000)`,
    );
  }
}
