// The draft a bot streams with sendMessageDraft, as Telegram shows it: a bubble whose new text
// types itself in, "Thinking…" while it is empty, a Stop button when the bot allowed one, gone
// when the bot sends a message, the user stops it, or 30 s pass without a new frame.

import { element } from "./dom.js";
import { icon } from "./icons.js";
import { renderRichText } from "./rich-text.js";

/** Frames of animation in which newly arrived text catches up. */
const CATCH_UP_FRAMES = 20;

/** The draft slot of the open chat. */
export class DraftView {
  #slot;
  #scroller;
  #onStop;
  #draft = null;
  #shown = 0;
  #frame = 0;
  #expiry = 0;
  /** The bubble's parts, kept while the draft lives so a click on Stop is never lost. */
  #parts = null;

  /**
   * `slot` is the element the bubble lives in, `scroller` the chat's scrolling pane (kept at the
   * end while the draft grows, if it was there), `onStop()` presses Stop.
   */
  constructor(slot, scroller, onStop) {
    this.#slot = slot;
    this.#scroller = scroller;
    this.#onStop = onStop;
  }

  /** Shows `draft` (a MessageDraft, or null for none) as of the simulator's `nowMs`. */
  show(draft, nowMs) {
    clearTimeout(this.#expiry);
    cancelAnimationFrame(this.#frame);
    const previous = this.#draft;
    this.#draft = draft;
    if (draft === null) {
      this.#parts = null;
      this.#slot.replaceChildren();
      return;
    }
    // The same draft growing keeps what is already revealed; a new draft types in from the start.
    const continues =
      previous !== null &&
      previous.draftId === draft.draftId &&
      draft.text.startsWith(previous.text.slice(0, this.#shown));
    if (!continues) this.#shown = 0;
    if (!continues || previous.hasStopButton !== draft.hasStopButton) this.#build(draft);
    this.#parts.item.dataset.frames = String(draft.frames);
    this.#expiry = setTimeout(() => this.show(null, 0), Math.max(0, draft.expiresAtMs - nowMs));
    const step = () => {
      const remaining = draft.text.length - this.#shown;
      if (remaining > 0) this.#shown += Math.max(1, Math.ceil(remaining / CATCH_UP_FRAMES));
      this.#paint(draft);
      if (this.#shown < draft.text.length) this.#frame = requestAnimationFrame(step);
    };
    step();
  }

  #build(draft) {
    const item = element("div", "message in draft");
    item.dataset.draftId = String(draft.draftId);
    const bubble = element("div", "bubble");
    const text = element("div", "text");
    bubble.append(text);
    item.append(bubble);
    if (draft.hasStopButton) {
      const stop = element("button", "stop-button");
      stop.append(icon("stop", 16), "Stop");
      stop.type = "button";
      stop.addEventListener("click", () => {
        stop.disabled = true;
        this.#onStop();
      });
      item.append(stop);
    } else if (draft.isStopped) {
      item.append(element("div", "stopped", "Stopped"));
    }
    this.#parts = { item, text };
    this.#slot.replaceChildren(item);
  }

  #paint(draft) {
    const scroller = this.#scroller;
    const atEnd = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 80;
    const { text } = this.#parts;
    text.replaceChildren();
    text.classList.toggle("thinking", draft.text.length === 0);
    if (draft.text.length === 0) {
      text.textContent = "Thinking";
    } else {
      renderRichText(text, draft.text, draft.entities, { limit: this.#shown });
    }
    if (!draft.isStopped) text.append(element("span", "caret"));
    if (atEnd) scroller.scrollTop = scroller.scrollHeight;
  }
}
