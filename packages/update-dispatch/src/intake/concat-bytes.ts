// Joining the chunks of a request body read from a stream into one array.

/** The chunks, in order, as one `Uint8Array` of `size` bytes. */
export function concatBytes(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes;
}
