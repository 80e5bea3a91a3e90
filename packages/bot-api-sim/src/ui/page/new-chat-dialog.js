// The "New chat" dialog: a private chat of a user (an existing one, or a new one named here) with
// a bot, or a group or supergroup of users and bots — made through the control API.

import { act } from "./api.js";
import { $, element } from "./dom.js";
import { userName } from "./format.js";
import { attempt } from "./toast.js";

function option(value, text) {
  const node = element("option", undefined, text);
  node.value = String(value);
  return node;
}

function check(name, value, text, checked) {
  const label = element("label", "check");
  const box = element("input");
  box.type = "checkbox";
  box.name = name;
  box.value = String(value);
  box.checked = checked;
  label.append(box, ` ${text}`);
  return label;
}

/** The dialog. `onCreated(chatId, botId)` opens the new chat. */
export class NewChatDialog {
  #dialog = $("new-chat");
  #tab = "private";
  #onCreated;

  constructor(onCreated) {
    this.#onCreated = onCreated;
    for (const tab of this.#dialog.querySelectorAll("[data-tab]")) {
      tab.addEventListener("click", () => this.#select(tab.dataset.tab));
    }
    $("private-user").addEventListener("change", () => {
      $("private-name-row").hidden = $("private-user").value !== "new";
    });
    $("new-chat-form").addEventListener("submit", (event) => {
      if (event.submitter?.value !== "create") return;
      event.preventDefault();
      void this.#create();
    });
  }

  /** Opens the dialog with the users and bots there are now. */
  open(users, bots) {
    const select = $("private-user");
    select.replaceChildren(
      option("new", "New user…"),
      ...users.map((u) => option(u.id, userName(u))),
    );
    $("private-name-row").hidden = false;
    $("private-name").value = "";
    $("private-bot").replaceChildren(...bots.map((bot) => option(bot.id, `@${bot.username}`)));
    $("private-bot-row").hidden = bots.length < 2;
    $("group-title").value = "";
    $("group-new-member").value = "";
    $("group-members").replaceChildren(
      ...users.map((user, index) => check("member", user.id, userName(user), index < 2)),
    );
    $("group-bots").replaceChildren(
      ...bots.map((bot, index) => check("bot", bot.id, `@${bot.username}`, index === 0)),
    );
    this.#select(users.length === 0 ? "private" : this.#tab);
    this.#dialog.showModal();
    (this.#tab === "private" ? $("private-name") : $("group-title")).focus();
  }

  #select(tab) {
    this.#tab = tab;
    for (const button of this.#dialog.querySelectorAll("[data-tab]")) {
      button.classList.toggle("active", button.dataset.tab === tab);
      button.setAttribute("aria-selected", String(button.dataset.tab === tab));
    }
    for (const pane of this.#dialog.querySelectorAll("[data-pane]")) {
      pane.hidden = pane.dataset.pane !== tab;
    }
  }

  async #newUser(name) {
    const [first, ...rest] = name.trim().split(/\s+/);
    return act("/users", {
      first_name: first || undefined,
      last_name: rest.join(" ") || undefined,
    });
  }

  async #create() {
    const created = await attempt(() =>
      this.#tab === "private" ? this.#private() : this.#group(),
    );
    if (created === undefined) return;
    this.#dialog.close();
    this.#onCreated(created.chatId, created.botId);
  }

  async #private() {
    const chosen = $("private-user").value;
    const userId =
      chosen === "new" ? (await this.#newUser($("private-name").value)).id : Number(chosen);
    const botId = Number($("private-bot").value);
    const chat = await act("/chats/private", { user_id: userId, bot_id: botId });
    return { chatId: chat.id, botId };
  }

  async #group() {
    const checked = (name) =>
      [...this.#dialog.querySelectorAll(`input[name=${name}]:checked`)].map((box) =>
        Number(box.value),
      );
    const members = checked("member");
    const newName = $("group-new-member").value.trim();
    if (newName !== "") members.push((await this.#newUser(newName)).id);
    if (members.length === 0) throw new Error("Pick at least one member, or name a new one");
    const kind = $("group-super").checked ? "supergroup" : "group";
    const chat = await act(`/chats/${kind}`, {
      title: $("group-title").value.trim() || undefined,
      member_ids: members,
      bot_ids: checked("bot"),
      bots_are_admins: $("group-admins").checked,
    });
    return { chatId: chat.id, botId: undefined };
  }
}
