// Short notices over the chat, as Telegram shows a bot's answerCallbackQuery text: a toast that
// fades by itself, or an alert the person closes (show_alert). Errors of the page's own actions
// use the same toast, in red.

import { $, element } from "./dom.js";

const TOAST_MS = 3000;

/** Shows a toast; `kind` is "info" or "error", `url` adds a link (answerCallbackQuery's url). */
export function toast(text, { kind = "info", url } = {}) {
  const item = element("div", `toast ${kind}`, text);
  item.setAttribute("role", kind === "error" ? "alert" : "status");
  if (url !== undefined) {
    const link = element("a", undefined, "Open link");
    link.href = url;
    link.target = "_blank";
    link.rel = "noopener noreferrer";
    item.append(" ", link);
  }
  $("toasts").append(item);
  setTimeout(() => {
    item.classList.add("leaving");
    item.addEventListener("transitionend", () => item.remove(), { once: true });
    setTimeout(() => item.remove(), 500);
  }, TOAST_MS);
}

/** Shows a modal alert with an OK button; resolves when it is closed. */
export function alertBox(text) {
  const dialog = $("alert");
  dialog.querySelector(".alert-text").textContent = text;
  dialog.showModal();
  return new Promise((resolve) => dialog.addEventListener("close", resolve, { once: true }));
}

/** Runs an action of the page; a refusal becomes an error toast instead of an unhandled rejection. */
export async function attempt(action) {
  try {
    return await action();
  } catch (error) {
    toast(error instanceof Error ? error.message : String(error), { kind: "error" });
    return undefined;
  }
}
