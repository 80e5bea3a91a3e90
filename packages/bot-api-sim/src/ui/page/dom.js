// The two DOM helpers every part of the page uses: an element of the page by id, and a new one.

/** The page's element with this id. */
export const $ = (id) => document.getElementById(id);

/** A new element with a class (optional) and text (optional). */
export function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}
