// The page's live channel: the simulator's server-sent events. Every (re)connection starts with
// `hello`, after which the page reloads what it shows, so an event missed while disconnected (or
// while the simulator cut a stream that fell behind) is never missed for good.

const EVENTS = ["transcript", "chat", "user", "callback_answer", "rate_limited", "fault"];
/** Wait before opening a new stream when the simulator refused one (503), in ms. */
const RETRY_MS = 2000;

/**
 * Connects and keeps connected. `handlers` has one function per event name plus `hello`;
 * `onStatus("live" | "reconnecting")` follows the connection.
 */
export function connectLive(handlers, onStatus) {
  let source;
  const open = () => {
    source = new EventSource("/_sim/events");
    source.addEventListener("hello", (event) => {
      onStatus("live");
      handlers.hello(JSON.parse(event.data));
    });
    for (const name of EVENTS) {
      source.addEventListener(name, (event) => handlers[name](JSON.parse(event.data)));
    }
    source.addEventListener("error", () => {
      onStatus("reconnecting");
      // The browser retries a dropped stream itself, but not a refused one.
      if (source.readyState === EventSource.CLOSED) setTimeout(open, RETRY_MS);
    });
  };
  open();
}
