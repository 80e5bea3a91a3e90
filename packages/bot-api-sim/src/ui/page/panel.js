// The side panel: what Telegram would enforce on the open chat's bot — its send budget (gauges
// that refill as time passes), the 429s the limits gave, the faults armed — and buttons that arm
// one: a 502, a connection reset after the call took effect, slow answers.

import { act, read } from "./api.js";
import { $, element } from "./dom.js";
import { clockTime } from "./format.js";
import { attempt, toast } from "./toast.js";

/** The methods a fault can be armed for; "download" is the file route, "*" every method. */
const METHODS = [
  "sendMessage",
  "editMessageText",
  "sendMessageDraft",
  "answerCallbackQuery",
  "sendDocument",
  "sendPhoto",
  "deleteMessage",
  "getUpdates",
  "getFile",
  "download",
  "*",
];
/** Latency of the "slow answers" button, in ms. */
const SLOW_MS = 3000;
/** Recent 429s and faults listed. */
const RECENT = 5;
/** Coalesces refresh requests that come in a burst, in ms. */
const REFRESH_DELAY_MS = 100;
const GAUGE_TICK_MS = 200;

function gauge(label, value, capacity, note) {
  const head = element("div", "gauge-head");
  head.append(
    element("span", undefined, label),
    element(
      "span",
      "gauge-figure",
      `${Number.isInteger(value) ? value : value.toFixed(1)} / ${capacity}`,
    ),
  );
  const fill = element("div", "gauge-fill");
  const share = capacity === 0 ? 0 : Math.max(0, Math.min(1, value / capacity));
  fill.style.width = `${share * 100}%`;
  if (share < 0.34) fill.classList.add("low");
  const bar = element("div", "gauge-bar");
  bar.append(fill);
  const row = element("div", "gauge");
  row.append(head, bar, element("div", "gauge-note", note));
  return row;
}

function perSecond(rate) {
  return rate >= 1 ? `${Number(rate.toFixed(2))}/s` : `1 per ${Number((1 / rate).toFixed(1))} s`;
}

/** A token bucket's gauge, refilled for the `elapsedS` since the budget was read. */
function bucketGauge(label, bucket, elapsedS) {
  const now = Math.min(bucket.capacity, bucket.available + elapsedS * bucket.perSecond);
  return gauge(
    label,
    Math.floor(now * 10) / 10,
    bucket.capacity,
    `refills ${perSecond(bucket.perSecond)}`,
  );
}

/** The group's sliding minute, with the messages that left it since it was read. */
function windowGauge(window, elapsedS) {
  const used = window.sentAgoMs.filter((ago) => ago + elapsedS * 1000 < window.windowMs).length;
  const seconds = Number((window.windowMs / 1000).toFixed(1));
  return gauge(
    "Group, any minute",
    window.limit - used,
    window.limit,
    `${used} sent in the last ${seconds} s`,
  );
}

function faultText(fault) {
  const after = fault.afterProcessing ? " after it took effect" : "";
  const what =
    fault.kind === "fail"
      ? `${fault.code}${after}`
      : fault.kind === "reset"
        ? `connection reset${after}`
        : "a body that is not JSON";
  return `${fault.method === "*" ? "every method" : fault.method}: ${what} ×${fault.remaining}`;
}

/** The figure line and the recent entries of a panel section. */
function figures(summary, recent, describe) {
  return [
    element("div", "figures", summary),
    ...recent.map((entry) =>
      element("div", "recent", `${clockTime(entry.at / 1000)} ${describe(entry)}`),
    ),
  ];
}

/** The panel of the open chat. */
export class Panel {
  #chat = null;
  #data = null;
  #fetchedAt = 0;
  #timer = 0;
  #recent429 = [];
  #recentFaults = [];

  constructor() {
    const select = $("fault-method");
    for (const method of METHODS) {
      const option = element("option", undefined, method === "*" ? "every method" : method);
      option.value = method;
      select.append(option);
    }
    const method = () => select.value;
    $("arm-502").addEventListener("click", () =>
      this.#arm(`502 on the next ${method()}`, () =>
        act("/faults", { method: method(), kind: "fail", code: 502 }),
      ),
    );
    $("arm-reset").addEventListener("click", () =>
      this.#arm(`a reset after the next ${method()} took effect`, () =>
        act("/faults", { method: method(), kind: "reset", after_processing: true }),
      ),
    );
    $("arm-slow").addEventListener("click", () => {
      const slow = this.#data?.faults.latency !== undefined;
      this.#arm(
        slow ? "answers at full speed again" : `${SLOW_MS / 1000} s answers on ${method()}`,
        () => act("/faults/latency", slow ? { ms: 0 } : { ms: SLOW_MS, methods: [method()] }),
      );
    });
    $("clear-faults").addEventListener("click", () =>
      this.#arm("no faults", () => act("/faults/clear")),
    );
    setInterval(() => this.#renderBudget(), GAUGE_TICK_MS);
  }

  /** Follows a chat ({ chat_id, bot_id } of the open one), or none. */
  show(chat) {
    this.#chat = chat;
    this.#data = null;
    this.#recent429 = [];
    $("panel-content").hidden = chat === null;
    this.refresh();
  }

  /** Reloads the panel soon (bursts of changes are coalesced). */
  refresh() {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#load(), REFRESH_DELAY_MS);
  }

  /** A 429 the limits gave (`data` as the event stream sends it). */
  rateLimited(data, isOpenChat) {
    if (!isOpenChat) return;
    this.#recent429 = [{ ...data, at: Date.now() }, ...this.#recent429].slice(0, RECENT);
    this.refresh();
  }

  /** A fault that fired. */
  faultFired(data) {
    this.#recentFaults = [{ ...data, at: Date.now() }, ...this.#recentFaults].slice(0, RECENT);
    this.refresh();
  }

  async #arm(what, call) {
    if ((await attempt(call)) !== undefined) {
      toast(`Armed: ${what}`);
      this.refresh();
    }
  }

  async #load() {
    const chat = this.#chat;
    if (chat === null) return;
    let data;
    try {
      data = await read("/page/panel", chat);
    } catch {
      return;
    }
    if (this.#chat !== chat) return;
    this.#data = data;
    this.#fetchedAt = performance.now();
    this.#render();
  }

  #render() {
    const { bot, rateLimits, timeScale, tooManyRequests, faults, faultsInjected } = this.#data;
    const waiting = `${bot.pendingUpdates} update${bot.pendingUpdates === 1 ? "" : "s"} waiting`;
    const polling = bot.isPolling ? "polling" : bot.webhookUrl ? "webhook set" : "not polling";
    $("panel-bot").textContent = `@${bot.username} · ${polling} · ${waiting}`;
    $("panel-bot").classList.toggle("idle", !bot.isPolling);
    $("panel-limits").textContent =
      rateLimits === false
        ? "Flood limits are off."
        : `Telegram's limits${timeScale === 1 ? "" : `, ${timeScale}× faster`}.`;
    this.#renderBudget();
    $("panel-429").replaceChildren(
      ...figures(
        `${tooManyRequests.chat} in this chat · ${tooManyRequests.total} in all`,
        this.#recent429,
        (entry) => `${entry.method}: retry after ${entry.retryAfter} s (${entry.scope})`,
      ),
    );
    const armed = faults.queued.map(faultText);
    if (faults.latency !== undefined) {
      armed.push(
        `${faults.latency.ms} ms slower: ${faults.latency.methods?.join(", ") ?? "every method"}`,
      );
    }
    if (faults.errorRate !== undefined) {
      armed.push(`${Math.round(faults.errorRate.rate * 100)}% random ${faults.errorRate.code}s`);
    }
    $("armed-faults").replaceChildren(
      ...(armed.length === 0 ? ["Nothing armed."] : armed).map((text) =>
        element("li", undefined, text),
      ),
    );
    $("arm-slow").textContent =
      faults.latency === undefined ? `Slow answers (${SLOW_MS / 1000} s)` : "Stop slow answers";
    $("fired-faults").replaceChildren(
      ...figures(
        `${faultsInjected} fired so far`,
        this.#recentFaults,
        (entry) => `${entry.method}: ${entry.fault}`,
      ),
    );
  }

  #renderBudget() {
    const budget = this.#data?.budget;
    if (budget === undefined || budget === false) {
      $("panel-budget").replaceChildren();
      return;
    }
    const elapsedS = (performance.now() - this.#fetchedAt) / 1000;
    const gauges = [bucketGauge("This chat", budget.chat, elapsedS)];
    if (budget.group !== undefined) gauges.push(windowGauge(budget.group, elapsedS));
    gauges.push(bucketGauge("The bot overall", budget.global, elapsedS));
    if (budget.drafts !== undefined)
      gauges.push(bucketGauge("Drafts here", budget.drafts, elapsedS));
    $("panel-budget").replaceChildren(...gauges);
  }
}
