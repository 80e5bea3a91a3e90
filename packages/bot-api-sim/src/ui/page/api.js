// The simulator's control API as the page calls it: GET with a query string or POST with JSON,
// the Bot API envelope unwrapped, and a refusal thrown with the simulator's own description.

/** A refused control call; `message` is the simulator's description. */
export class ControlError extends Error {
  constructor(description, code) {
    super(description);
    this.name = "ControlError";
    this.code = code;
  }
}

/** GET `/_sim<path>` with `query` fields; resolves with the result. */
export function read(path, query = {}) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null) search.set(key, String(value));
  }
  const suffix = search.size > 0 ? `?${search}` : "";
  return unwrap(fetch(`/_sim${path}${suffix}`, { headers: { accept: "application/json" } }));
}

/** POST `/_sim<path>` with a JSON body; resolves with the result. */
export function act(path, body = {}) {
  const fields = Object.fromEntries(
    Object.entries(body).filter(([, value]) => value !== undefined && value !== null),
  );
  return unwrap(
    fetch(`/_sim${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(fields),
    }),
  );
}

async function unwrap(pending) {
  const response = await pending;
  let envelope;
  try {
    envelope = await response.json();
  } catch {
    throw new ControlError(`The simulator answered ${response.status} without JSON`);
  }
  if (!envelope.ok) throw new ControlError(envelope.description, envelope.code);
  return envelope.result;
}

/** A file's bytes as base64, for the upload routes. */
export function base64Of(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onerror = () => reject(reader.error);
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ""));
    reader.readAsDataURL(file);
  });
}
