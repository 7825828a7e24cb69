/** A vector as OpenAI's `encoding_format: "base64"` sends it: little-endian float32 bytes, base64. */
export function embeddingToBase64(vector: ArrayLike<number>): string {
  const floats = vector instanceof Float32Array ? vector : Float32Array.from(vector);
  // Float32Array is host-endian; every platform Node.js runs on is little-endian, which the format requires.
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString('base64');
}

/** Plain numbers for JSON, rounded to float32 precision as the engine computed them. */
export function embeddingToNumbers(vector: ArrayLike<number>): number[] {
  return Array.from(vector, (value) => Math.fround(value));
}
