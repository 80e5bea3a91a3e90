// What a failed request of a stream means for it: drafts refused in this chat or by the server
// (fall back to edits), or the chat closed to the bot (the stream fails).

function fieldsOf(error: unknown): Record<string, unknown> {
  return (typeof error === "object" && error !== null ? error : {}) as Record<string, unknown>;
}

/**
 * Whether a draft's failure means drafts are refused: `TEXTDRAFT_PEER_INVALID` (this chat), or
 * 404 / "method not found" (a Bot API server without `sendMessageDraft`: every chat).
 */
export function isRefusal(error: unknown): { refused: boolean; everywhere: boolean } {
  const record = fieldsOf(error);
  const code = record.errorCode ?? record.error_code;
  const description = String(record.description ?? "");
  if (code === 404 || /method not found|method is not (supported|available)/i.test(description))
    return { refused: true, everywhere: true };
  if (/TEXTDRAFT_PEER_INVALID|draft.*(not supported|unavailable)/i.test(description))
    return { refused: true, everywhere: false };
  return { refused: false, everywhere: false };
}

/** A 403: the bot may not write to the chat any more. */
export function isForbidden(error: unknown): boolean {
  const record = fieldsOf(error);
  return (record.errorCode ?? record.error_code) === 403;
}
