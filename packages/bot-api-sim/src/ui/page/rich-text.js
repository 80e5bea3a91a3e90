// Message text with its entities as DOM nodes — never as HTML, so nothing a bot sends can run in
// the page. Entities nest (bold inside a link) and never cross, as Telegram guarantees; offsets
// and lengths are UTF-16 code units, like JavaScript strings.

const SAFE_LINK = /^(https?:|tg:|mailto:)/i;

function link(href, text) {
  const a = document.createElement("a");
  a.textContent = text;
  if (SAFE_LINK.test(href)) {
    a.href = href;
    a.target = "_blank";
    a.rel = "noopener noreferrer";
  }
  return a;
}

/** The element of one entity, its text filled in by the caller. */
function elementFor(entity, text, options) {
  const make = (tag, className) => {
    const element = document.createElement(tag);
    if (className !== undefined) element.className = className;
    return element;
  };
  switch (entity.type) {
    case "bold":
      return make("strong");
    case "italic":
      return make("em");
    case "underline":
      return make("u");
    case "strikethrough":
      return make("s");
    case "code":
      return make("code");
    case "pre": {
      const pre = make("pre");
      if (entity.language) pre.dataset.language = entity.language;
      return pre;
    }
    case "blockquote":
      return make("blockquote");
    case "expandable_blockquote": {
      const quote = make("blockquote", "expandable");
      quote.addEventListener("click", () => quote.classList.toggle("expanded"));
      return quote;
    }
    case "spoiler": {
      const spoiler = make("span", "spoiler");
      spoiler.addEventListener("click", () => spoiler.classList.add("revealed"));
      return spoiler;
    }
    case "text_link":
      return link(entity.url, "");
    case "url":
      return link(/^[a-z][a-z0-9+.-]*:/i.test(text) ? text : `http://${text}`, "");
    case "email":
      return link(`mailto:${text}`, "");
    case "phone_number":
      return make("span", "link-like");
    case "mention":
    case "text_mention":
    case "hashtag":
    case "cashtag":
      return make("span", "link-like");
    case "bot_command": {
      const command = make("a", "command");
      command.href = "#";
      command.addEventListener("click", (event) => {
        event.preventDefault();
        options.onCommand?.(text);
      });
      return command;
    }
    default:
      return make("span");
  }
}

function build(parent, text, entities, start, end, options) {
  let position = start;
  let index = 0;
  while (index < entities.length) {
    const entity = entities[index];
    const entityEnd = Math.min(entity.offset + entity.length, end);
    if (entity.offset > position) {
      parent.append(document.createTextNode(text.slice(position, entity.offset)));
    }
    let next = index + 1;
    while (next < entities.length && entities[next].offset < entityEnd) next++;
    const element = elementFor(entity, text.slice(entity.offset, entityEnd), options);
    const inner = entities.slice(index + 1, next).filter((child) => child.offset >= entity.offset);
    build(element, text, inner, entity.offset, entityEnd, options);
    parent.append(element);
    position = Math.max(position, entityEnd);
    index = next;
  }
  if (position < end) parent.append(document.createTextNode(text.slice(position, end)));
}

/**
 * Appends `text` with its entities to `parent`. `limit` shows only that many UTF-16 units (a
 * draft being revealed); `onCommand(command)` runs when a /command is clicked.
 */
export function renderRichText(parent, text, entities = [], options = {}) {
  const end = Math.min(text.length, options.limit ?? text.length);
  const sorted = entities
    .filter((entity) => entity.offset < end && entity.length > 0)
    .sort((a, b) => a.offset - b.offset || b.length - a.length);
  build(parent, text, sorted, 0, end, options);
}
