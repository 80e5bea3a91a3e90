// One message as a bubble: sender, the message it replies to, a photo or document with its
// download link, the text with entities, the time and "edited", and its inline keyboard. Service
// messages (joins, upgrades) are a centred line.

import { element } from "./dom.js";
import { clockTime, colorOf, fileSize, preview, serviceText, userName } from "./format.js";
import { icon } from "./icons.js";
import { renderRichText } from "./rich-text.js";

function fileUrl(fileId) {
  return `/_sim/downloads/${encodeURIComponent(fileId)}`;
}

function photoView(photo) {
  const largest = photo[photo.length - 1];
  const link = element("a", "photo");
  link.href = fileUrl(largest.file_id);
  link.target = "_blank";
  link.rel = "noopener";
  const image = element("img");
  image.src = fileUrl(largest.file_id);
  image.alt = "Photo";
  const scale = Math.min(1, 320 / Math.max(1, largest.width));
  image.width = Math.max(1, Math.round(largest.width * scale));
  image.height = Math.max(1, Math.round(largest.height * scale));
  link.append(image);
  const download = element("a", "download", "Download");
  download.href = fileUrl(largest.file_id);
  download.download = "";
  const wrap = element("div", "media");
  wrap.append(link, download);
  return wrap;
}

function documentView(file) {
  const name = file.file_name ?? "File";
  const card = element("a", "document");
  card.href = fileUrl(file.file_id);
  card.download = name;
  card.title = `Download ${name}`;
  const badge = element("span", "document-icon");
  badge.append(icon("download"));
  const info = element("span", "document-info");
  info.append(
    element("span", "document-name", name),
    element("span", "document-size", fileSize(file.file_size ?? 0)),
  );
  card.append(badge, info);
  return card;
}

function buttonView(message, button, context) {
  if (button.url !== undefined) {
    const link = element("a", "inline-button", `${button.text} ↗`);
    link.href = button.url;
    link.target = "_blank";
    link.rel = "noopener noreferrer";
    return link;
  }
  const node = element("button", "inline-button", button.text);
  node.type = "button";
  if (button.callback_data !== undefined) {
    node.dataset.callbackData = button.callback_data;
    node.addEventListener("click", () => context.onButton(message, button, node));
  } else if (button.copy_text !== undefined) {
    node.addEventListener("click", () => context.onCopy(button.copy_text.text));
  } else if (button.switch_inline_query_current_chat !== undefined) {
    node.addEventListener("click", () =>
      context.onInlineQuery(button.switch_inline_query_current_chat),
    );
  } else {
    node.disabled = true;
    node.title = "This kind of button is not simulated";
  }
  return node;
}

function keyboardView(message, context) {
  const rows = message.reply_markup?.inline_keyboard ?? [];
  const keyboard = element("div", "inline-keyboard");
  for (const row of rows) {
    const line = element("div", "inline-row");
    for (const button of row) line.append(buttonView(message, button, context));
    keyboard.append(line);
  }
  return keyboard;
}

function quoteView(replied, context) {
  const quote = element("button", "quote");
  quote.type = "button";
  quote.style.borderColor = colorOf(replied.from?.id ?? 0);
  quote.append(
    element("span", "quote-name", userName(replied.from)),
    element("span", "quote-text", preview(replied)),
  );
  quote.addEventListener("click", () => context.onQuote(replied.message_id));
  return quote;
}

function actionButton(iconName, label, onClick) {
  const button = element("button", "icon-button");
  button.append(icon(iconName, 18));
  button.type = "button";
  button.title = label;
  button.setAttribute("aria-label", label);
  button.addEventListener("click", onClick);
  return button;
}

function actionsView(message, context) {
  const actions = element("div", "message-actions");
  actions.append(actionButton("reply", "Reply", () => context.onReply(message)));
  if (context.isOutgoing && message.text !== undefined) {
    actions.append(actionButton("edit", "Edit", () => context.onEdit(message)));
  }
  return actions;
}

/** A centred line over the chat: a day heading or a service message. */
export function notice(className, text) {
  const line = element("div", className);
  line.append(element("span", undefined, text));
  return line;
}

/**
 * The element of one message. `context`: `isOutgoing` (the acting user sent it), `showSender`
 * (groups), and the callbacks `onButton`, `onCopy`, `onInlineQuery`, `onCommand`, `onQuote`,
 * `onReply` and `onEdit`.
 */
export function renderMessage(message, context) {
  const service = serviceText(message);
  if (service !== undefined) {
    const line = notice("service", service);
    line.dataset.messageId = String(message.message_id);
    return line;
  }
  const item = element("div", `message ${context.isOutgoing ? "out" : "in"}`);
  item.dataset.messageId = String(message.message_id);
  const row = element("div", "message-row");
  const bubble = element("div", "bubble");
  if (context.showSender && !context.isOutgoing) {
    const sender = element("div", "sender", userName(message.from));
    sender.style.color = colorOf(message.from?.id ?? 0);
    bubble.append(sender);
  }
  if (message.reply_to_message) bubble.append(quoteView(message.reply_to_message, context));
  if (message.photo) bubble.append(photoView(message.photo));
  if (message.document) bubble.append(documentView(message.document));
  const text = message.text ?? message.caption;
  const body = element("div", "text");
  if (text !== undefined) {
    renderRichText(body, text, message.entities ?? message.caption_entities ?? [], {
      onCommand: context.onCommand,
    });
  }
  const meta = element("span", "meta");
  if (message.edit_date) meta.append(element("span", "edited", "edited"));
  meta.append(element("time", undefined, clockTime(message.date)));
  body.append(meta);
  bubble.append(body);
  row.append(bubble, actionsView(message, context));
  item.append(row);
  if (message.reply_markup?.inline_keyboard?.length > 0) {
    item.append(keyboardView(message, context));
  }
  return item;
}
