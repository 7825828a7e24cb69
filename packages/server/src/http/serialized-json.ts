/**
 * A JSON answer already serialised, which the route writes as its text (respond.ts): the
 * response cache's stored answer, so a hit is the stored bytes without parsing and serialising
 * them again (hundreds of milliseconds for an answer of a few MiB on a busy machine), and the
 * answer a miss has just serialised to store. Serialised again (an idempotency record, a
 * response check) it gives the JSON it holds.
 */
export class SerializedJson {
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}
