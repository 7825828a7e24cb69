/**
 * A JSON answer already serialised, which the route writes as it is (respond.ts): the response
 * cache's stored answer, so a hit is the stored bytes without parsing, serialising or even
 * encoding them again (hundreds of milliseconds for an answer of a few MiB on a busy machine),
 * and the answer a miss has just serialised to store. Serialised again (an idempotency record, a
 * response check) it gives the JSON it holds.
 */
export class SerializedJson {
  /** The UTF-8 bytes of the JSON text: what the route writes to the socket. */
  readonly bytes: Buffer;

  constructor(json: string | Buffer) {
    this.bytes = typeof json === 'string' ? Buffer.from(json) : json;
  }

  get text(): string {
    return this.bytes.toString('utf8');
  }

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}
