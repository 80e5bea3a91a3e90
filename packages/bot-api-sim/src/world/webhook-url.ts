// The webhook URL rules: Telegram's (HTTPS on ports 80, 88, 443 or 8443), relaxed for loopback as
// the real server is in --local mode, and which URLs the simulator actually delivers to.

import { badRequest } from "../wire/api-failure.js";

/** A checked webhook URL. */
export interface WebhookUrl {
  readonly url: URL;
  /**
   * The loopback address to deliver to (`ip_address` when given, else the URL's host), or
   * `undefined` when that is no loopback address: the simulator never connects elsewhere.
   */
  readonly address: string | undefined;
}

const PORTS = ["80", "88", "443", "8443"];

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
}

/** `[::1]` as URL.hostname writes it, `::1` as a socket takes it. */
function bare(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

/**
 * Checks a setWebhook URL the way Telegram reports problems with it. A loopback host may use
 * HTTP and any port.
 */
export function checkWebhookUrl(text: string, ipAddress: string | undefined): WebhookUrl {
  let url: URL;
  try {
    url = new URL(text.includes("://") ? text : `https://${text}`);
  } catch {
    throw badRequest("invalid webhook URL specified");
  }
  const host = bare(url.hostname);
  if (isLoopback(host)) {
    if (url.protocol !== "https:" && url.protocol !== "http:") {
      throw badRequest("bad webhook: An HTTPS URL must be provided for webhook");
    }
  } else {
    if (url.protocol !== "https:") {
      throw badRequest("bad webhook: An HTTPS URL must be provided for webhook");
    }
    if (!PORTS.includes(url.port === "" ? "443" : url.port)) {
      throw badRequest("bad webhook: Webhook can be set up only on ports 80, 88, 443 or 8443");
    }
  }
  const target = ipAddress === undefined ? host : bare(ipAddress);
  return { url, address: isLoopback(target) ? target : undefined };
}

/** The real server's rule for `secret_token`: at most 256 of `A-Z a-z 0-9 _ -`. */
export function checkSecretToken(secret: string | undefined): string | undefined {
  if (secret === undefined) return undefined;
  if (secret.length > 256) throw badRequest("secret token is too long");
  if (!/^[A-Za-z0-9_-]*$/.test(secret))
    throw badRequest("secret token contains unallowed characters");
  return secret;
}
