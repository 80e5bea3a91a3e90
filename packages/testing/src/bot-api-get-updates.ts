// A getUpdates over real HTTP (Node's fetch) for end-to-end tests against the Bot API simulator,
// for packages whose tests have no Bot API client: the envelope's failure comes back as an error
// with the fields a poller reads (`error_code`, `parameters`), and never with the token.

/** The parameters of getUpdates, as a poller passes them. */
export interface GetUpdatesCall {
  readonly offset?: number;
  readonly limit?: number;
  readonly timeout?: number;
  readonly allowed_updates?: readonly string[];
}

/** A failed Bot API call: the envelope's fields, and a message without the token. */
export class BotApiCallError extends Error {
  readonly error_code: number;
  readonly description: string;
  readonly parameters: { readonly retry_after?: number };

  constructor(envelope: {
    readonly error_code: number;
    readonly description: string;
    readonly parameters?: { readonly retry_after?: number };
  }) {
    super(`getUpdates failed: ${envelope.error_code} ${envelope.description}`);
    this.name = "BotApiCallError";
    this.error_code = envelope.error_code;
    this.description = envelope.description;
    this.parameters = envelope.parameters ?? {};
  }
}

/**
 * A `getUpdates(params, { signal })` that calls `<apiRoot>/bot<token>/getUpdates` with a JSON
 * body and resolves the updates, typed as `U`.
 *
 * @example
 * const getUpdates = botApiGetUpdates<Update>(sim.apiRoot, sim.token);
 */
export function botApiGetUpdates<U>(
  apiRoot: string,
  token: string,
): (params: GetUpdatesCall, options: { readonly signal: AbortSignal }) => Promise<readonly U[]> {
  return async (params, { signal }) => {
    const response = await fetch(`${apiRoot}/bot${token}/getUpdates`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(params),
      signal,
    });
    const envelope = (await response.json()) as {
      readonly ok: boolean;
      readonly result?: readonly U[];
      readonly error_code?: number;
      readonly description?: string;
      readonly parameters?: { readonly retry_after?: number };
    };
    if (!envelope.ok) {
      throw new BotApiCallError({
        error_code: envelope.error_code ?? response.status,
        description: envelope.description ?? "",
        ...(envelope.parameters === undefined ? {} : { parameters: envelope.parameters }),
      });
    }
    return envelope.result ?? [];
  };
}
