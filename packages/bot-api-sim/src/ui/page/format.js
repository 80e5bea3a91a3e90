// How the page words and colours things: names, times, sizes, avatars and the one-line preview of
// a message, as Telegram's clients show them.

import { element } from "./dom.js";

/** Telegram's seven avatar colours, picked by id. */
const AVATAR_COLORS = ["#e17076", "#eda86c", "#a695e7", "#7bc862", "#6ec9cb", "#65aadd", "#ee7aae"];

/** A user's (or bot's) display name. */
export function userName(user) {
  if (user === undefined || user === null) return "Someone";
  return [user.first_name, user.last_name].filter(Boolean).join(" ");
}

/** A chat's title: a group's title, a private chat's user name. */
export function chatTitle(chat) {
  return chat.type === "private" ? userName(chat) : chat.title || "Group";
}

/** The colour of an avatar or a sender name. */
export function colorOf(id) {
  return AVATAR_COLORS[Math.abs(Number(id)) % AVATAR_COLORS.length];
}

/** A round avatar with initials. */
export function avatar(name, id, size = 42) {
  const circle = element("span", "avatar");
  circle.style.background = colorOf(id);
  circle.style.width = `${size}px`;
  circle.style.height = `${size}px`;
  circle.style.fontSize = `${Math.round(size * 0.4)}px`;
  const initials = name
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 2)
    .map((word) => [...word][0]?.toUpperCase() ?? "")
    .join("");
  circle.textContent = initials || "?";
  circle.setAttribute("aria-hidden", "true");
  return circle;
}

/** `HH:MM` of a Unix date in seconds. */
export function clockTime(unixSeconds) {
  return new Date(unixSeconds * 1000).toLocaleTimeString([], {
    hour: "2-digit",
    minute: "2-digit",
  });
}

/** The chat list's time: the clock today, the weekday this week, else the date. */
export function listTime(unixSeconds) {
  const date = new Date(unixSeconds * 1000);
  const now = new Date();
  if (date.toDateString() === now.toDateString()) return clockTime(unixSeconds);
  if (now.getTime() - date.getTime() < 6 * 24 * 3600 * 1000) {
    return date.toLocaleDateString([], { weekday: "short" });
  }
  return date.toLocaleDateString([], { day: "numeric", month: "short" });
}

/** A day heading between messages: "Today", or the date. */
export function dayLabel(unixSeconds) {
  const date = new Date(unixSeconds * 1000);
  if (date.toDateString() === new Date().toDateString()) return "Today";
  return date.toLocaleDateString([], { day: "numeric", month: "long", year: "numeric" });
}

/** A byte count for people: 812 B, 4.2 KB, 1.3 MB. */
export function fileSize(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** What a service message says, or undefined for an ordinary message. */
export function serviceText(message) {
  const actor = userName(message.from);
  if (message.new_chat_members) {
    const names = message.new_chat_members.map(userName).join(", ");
    return message.new_chat_members.some((member) => member.id === message.from?.id)
      ? `${names} joined the group`
      : `${actor} added ${names}`;
  }
  if (message.left_chat_member) {
    return message.left_chat_member.id === message.from?.id
      ? `${userName(message.left_chat_member)} left the group`
      : `${actor} removed ${userName(message.left_chat_member)}`;
  }
  if (message.group_chat_created) return `${actor} created the group`;
  if (message.supergroup_chat_created) return `${actor} created the supergroup`;
  if (message.migrate_to_chat_id) return "The group was upgraded to a supergroup";
  if (message.migrate_from_chat_id) return "The supergroup was upgraded from a group";
  return undefined;
}

/** One line about a message, for the chat list and reply quotes. */
export function preview(message) {
  const service = serviceText(message);
  if (service !== undefined) return service;
  if (message.text !== undefined) return message.text;
  const caption = message.caption === undefined ? "" : `, ${message.caption}`;
  if (message.photo) return `Photo${caption}`;
  if (message.document) return `${message.document.file_name ?? "File"}${caption}`;
  return "Message";
}
