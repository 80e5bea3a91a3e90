// The chat list, like Telegram's first screen: every chat with its avatar, title, newest message
// and its time, newest activity first, unread bot messages counted, filtered by the search field.

import { $, element } from "./dom.js";
import { avatar, chatTitle, listTime, preview, userName } from "./format.js";
import { icon } from "./icons.js";

/** The sidebar's list of chats. */
export class ChatList {
  #chats = new Map();
  #unread = new Map();
  #bots = new Map();
  #selected = null;
  #frame = 0;
  #onOpen;

  /** `onOpen(entry)` runs when the person picks a chat. */
  constructor(onOpen) {
    this.#onOpen = onOpen;
    $("search").addEventListener("input", () => this.#render());
  }

  /** Renders at the next frame: a busy bot's burst of events costs one render, not one each. */
  #schedule() {
    if (this.#frame !== 0) return;
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0;
      this.#render();
    });
  }

  /** The bots the simulator serves (UserFromGetMe objects), for names in the list. */
  setBots(bots) {
    this.#bots = new Map(bots.map((bot) => [bot.id, bot]));
  }

  /** Replaces every entry (a fresh `/page/chats` answer). */
  replace(entries) {
    this.#chats = new Map(entries.map((entry) => [entry.key, entry]));
    this.#schedule();
  }

  /** Adds or updates one entry, unless the list already holds a newer state of it. */
  upsert(entry) {
    const known = this.#chats.get(entry.key);
    if (known !== undefined && known.activitySeq > entry.activitySeq) return;
    this.#chats.set(entry.key, entry);
    this.#schedule();
  }

  /** The entry of a chat, or undefined. */
  get(key) {
    return this.#chats.get(key);
  }

  /** The first entry that satisfies `predicate`, or undefined. */
  find(predicate) {
    return [...this.#chats.values()].find(predicate);
  }

  /** Counts a bot message in a chat that is not open. */
  markUnread(key) {
    this.#unread.set(key, (this.#unread.get(key) ?? 0) + 1);
    this.#schedule();
  }

  /** Highlights the open chat and clears its unread count. */
  select(key) {
    this.#selected = key;
    this.#unread.delete(key);
    this.#schedule();
  }

  #title(entry) {
    const title = chatTitle(entry.chat);
    // With several bots, a private chat says which bot it is with.
    if (entry.chat.type !== "private" || this.#bots.size < 2) return title;
    return `${title} · @${this.#bots.get(entry.botId)?.username ?? "bot"}`;
  }

  #preview(entry) {
    const newest = entry.newest;
    if (newest === null) return entry.chat.type === "private" ? "No messages yet" : "";
    const text = preview(newest);
    if (newest.new_chat_members || newest.left_chat_member || newest.group_chat_created) {
      return text;
    }
    if (entry.chat.type !== "private") return `${userName(newest.from)}: ${text}`;
    // A private chat is seen as its user: their own messages are "You".
    return newest.from?.is_bot === true ? text : `You: ${text}`;
  }

  #render() {
    const filter = $("search").value.trim().toLowerCase();
    const entries = [...this.#chats.values()]
      .filter((entry) => filter === "" || this.#title(entry).toLowerCase().includes(filter))
      .sort(
        (a, b) => b.activitySeq - a.activitySeq || (b.newest?.date ?? 0) - (a.newest?.date ?? 0),
      );
    const list = $("chat-list");
    list.replaceChildren(...entries.map((entry) => this.#item(entry)));
    $("list-empty").hidden = this.#chats.size > 0;
  }

  #item(entry) {
    const button = element("button", "chat-item");
    button.type = "button";
    button.dataset.chatKey = entry.key;
    if (entry.key === this.#selected) button.classList.add("selected");
    const name = element("span", "chat-item-title");
    if (entry.chat.type !== "private") name.append(icon("group", 16));
    name.append(this.#title(entry));
    const top = element("span", "chat-item-top");
    top.append(
      name,
      element("span", "chat-item-time", entry.newest === null ? "" : listTime(entry.newest.date)),
    );
    const bottom = element("span", "chat-item-bottom");
    bottom.append(element("span", "chat-item-preview", this.#preview(entry)));
    const unread = this.#unread.get(entry.key) ?? 0;
    if (unread > 0) bottom.append(element("span", "badge", String(unread)));
    const body = element("span", "chat-item-body");
    body.append(top, bottom);
    button.append(avatar(chatTitle(entry.chat), entry.chat.id, 48), body);
    button.addEventListener("click", () => this.#onOpen(entry.key));
    const item = element("li");
    item.append(button);
    return item;
  }
}
