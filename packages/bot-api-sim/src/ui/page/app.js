// The chat page: loads the bots, the chat list and the users, follows the simulator's event
// stream, and routes each event to the list, the open chat and the panel.

import { read } from "./api.js";
import { ChatList } from "./chat-list.js";
import { ChatView } from "./chat-view.js";
import { $ } from "./dom.js";
import { fillIcons } from "./icons.js";
import { connectLive } from "./live.js";
import { NewChatDialog } from "./new-chat-dialog.js";
import { Panel } from "./panel.js";
import { attempt } from "./toast.js";

fillIcons();

let bots = [];
const users = new Map();
const panel = new Panel();
const list = new ChatList((key) => void openChat(key));
const view = new ChatView(() => void refreshAfterChange());
const dialog = new NewChatDialog((chatId, botId) => void openCreated(chatId, botId));

async function loadChats() {
  const answer = await attempt(() => read("/page/chats", { limit: 1000 }));
  if (answer !== undefined) list.replace(answer.chats);
}

async function loadUsers() {
  const answer = await attempt(() => read("/page/users", { limit: 1000 }));
  if (answer === undefined) return;
  users.clear();
  for (const user of answer.users) users.set(user.id, user);
}

async function openChat(key) {
  const entry = list.get(key);
  if (entry === undefined) return;
  list.select(key);
  document.body.classList.add("chat-open");
  panel.show({ chat_id: entry.chat.id, bot_id: entry.botId });
  await view.open(entry);
}

async function openCreated(chatId, botId) {
  await loadChats();
  const entry = list.find(
    (candidate) =>
      candidate.chat.id === chatId && (botId === undefined || candidate.botId === botId),
  );
  if (entry !== undefined) await openChat(entry.key);
}

/** Something changed that events do not carry (a block): reload the list and the panel. */
async function refreshAfterChange() {
  await loadChats();
  const key = view.key;
  const entry = key === null ? undefined : list.get(key);
  if (entry !== undefined) await view.open(entry);
  panel.refresh();
}

function setStatus(status) {
  const dot = $("live-status");
  dot.dataset.status = status;
  dot.title = status === "live" ? "Live: changes appear as they happen" : "Reconnecting…";
}

connectLive(
  {
    // On every (re)connection: reload what is shown, so nothing missed stays missing.
    hello: () => {
      void loadChats();
      void loadUsers();
      view.reload();
      panel.refresh();
    },
    transcript: (data) => {
      list.upsert(data.chat);
      if (data.chat.key === view.key) {
        view.apply(data);
        panel.refresh();
      } else if (data.event.kind === "send" && data.event.actor === "bot") {
        list.markUnread(data.chat.key);
      }
    },
    chat: (data) => list.upsert(data.chat),
    user: (data) => users.set(data.user.id, data.user),
    callback_answer: (data) => {
      if (data.chatKey === view.key) view.callbackAnswered(data);
    },
    rate_limited: (data) => panel.rateLimited(data, data.chatKey === view.key),
    fault: (data) => panel.faultFired(data),
  },
  setStatus,
);

$("new-chat-button").addEventListener("click", () => dialog.open([...users.values()], bots));
$("empty-new-chat").addEventListener("click", () => dialog.open([...users.values()], bots));
$("back-button").addEventListener("click", () => document.body.classList.remove("chat-open"));
// Wide screens show the panel beside the chat (the button hides it); narrower ones over it.
const narrow = window.matchMedia("(max-width: 1100px)");
$("panel-button").addEventListener("click", () =>
  document.body.classList.toggle(narrow.matches ? "panel-shown" : "panel-hidden"),
);

const info = await attempt(() => read(""));
if (info !== undefined) {
  bots = info.bots;
  list.setBots(bots);
  $("bot-names").textContent = bots.map((bot) => `@${bot.username}`).join(", ");
}
