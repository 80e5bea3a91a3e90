// The bottom of a chat: the text field (Enter sends, Shift+Enter breaks the line), replying to and
// editing a message, sending a file, the bot's command menu, the member a group message is sent
// as, and the bot's reply keyboard (a one-time keyboard hides after a press, ⌨ brings it back).

import { $, element } from "./dom.js";
import { userName } from "./format.js";

/** Reply keyboard buttons that ask the client for something the simulator cannot give. */
const REQUESTS = [
  "request_contact",
  "request_location",
  "request_poll",
  "request_users",
  "request_chat",
  "request_managed_bot",
  "web_app",
];

/** The composer of the open chat. */
export class Composer {
  #handlers;
  #input = $("composer-input");
  #context = null;
  #keyboard = null;
  #commands = [];

  /**
   * `handlers`: `send(text, replyToId)`, `edit(messageId, text)`, `upload(file, caption,
   * replyToId)` and `senderChanged(userId)`; each may return a promise.
   */
  constructor(handlers) {
    this.#handlers = handlers;
    this.#input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        void this.#submit();
      }
      if (event.key === "Escape") this.#setContext(null);
    });
    this.#input.addEventListener("input", () => this.#grow());
    $("send-button").addEventListener("click", () => void this.#submit());
    $("compose-cancel").addEventListener("click", () => this.#setContext(null));
    $("attach-button").addEventListener("click", () => $("attach-input").click());
    $("attach-input").addEventListener("change", () => void this.#attach());
    $("keyboard-toggle").addEventListener("click", () => {
      $("reply-keyboard").hidden = !$("reply-keyboard").hidden;
    });
    $("commands-button").addEventListener("click", () => {
      $("commands-menu").hidden = !$("commands-menu").hidden;
    });
    $("send-as").addEventListener("change", () =>
      this.#handlers.senderChanged(Number($("send-as").value)),
    );
  }

  /**
   * Prepares for a chat: `members` ({ user, status }) to send as in a group (empty in private
   * chats), the acting user, and the bot's commands.
   */
  setChat({ members, actingUserId, commands }) {
    const select = $("send-as");
    select.replaceChildren();
    const present = members.filter((member) =>
      ["creator", "administrator", "member"].includes(member.status),
    );
    for (const { user } of present) {
      const option = element("option", undefined, userName(user));
      option.value = String(user.id);
      option.selected = user.id === actingUserId;
      select.append(option);
    }
    select.hidden = present.length === 0;
    this.#commands = commands;
    this.#renderCommands();
    this.#setContext(null);
    this.setKeyboard(null);
    this.#input.value = "";
    this.#grow();
  }

  /** Replies to `message` with the next send. */
  replyTo(message, label = "Reply to") {
    this.#setContext({ kind: "reply", message, label });
    this.#input.focus();
  }

  /** Edits `message` (one of the acting user's) with the next send. */
  edit(message) {
    this.#setContext({ kind: "edit", message, label: "Edit" });
    this.#input.value = message.text;
    this.#grow();
    this.#input.focus();
  }

  /** Puts text in the field (an inline-query button does this). */
  insert(text) {
    this.#input.value = text;
    this.#grow();
    this.#input.focus();
  }

  /** Shows what `/_sim/keyboard` answered: a ShownReplyKeyboard or null. */
  setKeyboard(shown) {
    this.#keyboard = shown;
    const area = $("reply-keyboard");
    area.replaceChildren();
    this.#input.placeholder = shown?.markup.input_field_placeholder || "Message";
    $("keyboard-toggle").hidden = shown === null;
    area.hidden = shown === null;
    if (shown === null) return;
    area.classList.toggle("resized", shown.markup.resize_keyboard === true);
    for (const row of shown.markup.keyboard) {
      const line = element("div", "keyboard-row");
      for (const raw of row) {
        const button = typeof raw === "string" ? { text: raw } : raw;
        const node = element("button", "keyboard-button", button.text);
        node.type = "button";
        if (REQUESTS.some((field) => button[field] !== undefined)) {
          node.disabled = true;
          node.title = "Sharing a contact, location, poll, user or chat is not simulated";
        } else {
          node.addEventListener("click", () => void this.#press(button.text));
        }
        line.append(node);
      }
      area.append(line);
    }
  }

  async #press(text) {
    if (this.#keyboard?.markup.one_time_keyboard === true) $("reply-keyboard").hidden = true;
    await this.#handlers.send(text, undefined);
  }

  #renderCommands() {
    const menu = $("commands-menu");
    menu.replaceChildren();
    menu.hidden = true;
    $("commands-button").hidden = this.#commands.length === 0;
    for (const { command, description } of this.#commands) {
      const item = element("button", "command-item");
      item.type = "button";
      item.append(
        element("span", "command-name", `/${command}`),
        element("span", "command-description", description),
      );
      item.addEventListener("click", () => {
        menu.hidden = true;
        void this.#handlers.send(`/${command}`, undefined);
      });
      menu.append(item);
    }
  }

  #setContext(context) {
    this.#context = context;
    const bar = $("compose-context");
    bar.hidden = context === null;
    if (context === null) return;
    bar.querySelector(".context-label").textContent = context.label;
    const message = context.message;
    bar.querySelector(".context-text").textContent =
      message.text ?? message.caption ?? (message.document ? "File" : "Photo");
  }

  #grow() {
    this.#input.style.height = "auto";
    this.#input.style.height = `${Math.min(this.#input.scrollHeight, 160)}px`;
  }

  async #submit() {
    const text = this.#input.value.trim();
    if (text.length === 0) return;
    const context = this.#context;
    this.#input.value = "";
    this.#grow();
    this.#setContext(null);
    if (context?.kind === "edit") {
      await this.#handlers.edit(context.message.message_id, text);
    } else {
      await this.#handlers.send(text, context?.message.message_id);
    }
  }

  async #attach() {
    const input = $("attach-input");
    const file = input.files?.[0];
    input.value = "";
    if (file === undefined) return;
    const caption = this.#input.value.trim();
    const context = this.#context;
    this.#input.value = "";
    this.#grow();
    this.#setContext(null);
    await this.#handlers.upload(
      file,
      caption === "" ? undefined : caption,
      context?.kind === "reply" ? context.message.message_id : undefined,
    );
  }
}
