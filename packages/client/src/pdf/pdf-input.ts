/** What the PDF and document helpers accept: a file path, bytes, a Blob, or a stream of bytes. */
export type FileInput = string | URL | Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

function isAsyncIterable(value: unknown): value is AsyncIterable<Uint8Array> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/**
 * A body the transport can send without reading it all first where possible: files become lazy
 * Blobs (`fs.openAsBlob`, so a retry can send them again), Node streams become web streams.
 * `node:fs` is imported only for paths, so browsers can use the rest.
 */
export async function toUploadBody(input: FileInput): Promise<Uint8Array | Blob | ReadableStream<Uint8Array>> {
  if (typeof input === 'string' || input instanceof URL) {
    const { openAsBlob } = await import('node:fs');
    return openAsBlob(input);
  }
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  if (input instanceof Uint8Array || input instanceof Blob || input instanceof ReadableStream) return input;
  if (isAsyncIterable(input)) {
    const iterator = input[Symbol.asyncIterator]();
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await iterator.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
      async cancel() {
        await iterator.return?.();
      },
    });
  }
  throw new TypeError('Expected a file path, a URL, bytes, a Blob or a stream of bytes');
}

/** All of the input's bytes in memory (for JSON bodies, which carry base64). */
export async function readAllBytes(input: FileInput): Promise<Uint8Array> {
  const body = await toUploadBody(input);
  if (body instanceof Uint8Array) return body;
  return new Uint8Array(await new Response(body).arrayBuffer());
}

export function toBase64(bytes: Uint8Array): string {
  return typeof Buffer !== 'undefined'
    ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')
    : btoa(Array.from(bytes, (byte) => String.fromCharCode(byte)).join(''));
}

/** The file name of a path input, to help the server tell a document's format. */
export function fileNameOf(input: FileInput): string | undefined {
  if (typeof input === 'string') return input.split(/[\\/]/).pop();
  if (input instanceof URL) return input.pathname.split('/').pop();
  if (typeof File !== 'undefined' && input instanceof File) return input.name;
  return undefined;
}
