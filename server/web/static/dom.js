// Building the page's elements. Every piece of data goes in as text
// (textContent or attribute values), never as markup: a tool call's input is
// written by an agent, and "<img src=x onerror=...>" in a command must show
// as those characters, not run.

// el makes an element: el("li", {class: "chip"}, "text", child, ...).
// Attributes are set with setAttribute; children that are strings become
// text nodes; null and false children are skipped.
export function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return e;
}

// clear removes every child of e.
export function clear(e) {
  while (e.firstChild) e.firstChild.remove();
}

// pretty is a JSON value as indented text; a string that holds JSON (tool
// inputs sometimes arrive that way) is shown decoded.
export function pretty(v) {
  if (typeof v === "string") {
    try {
      return JSON.stringify(JSON.parse(v), null, 2);
    } catch {
      return v;
    }
  }
  return JSON.stringify(v, null, 2);
}

// remaining is a duration in milliseconds as "4:05" or "1:02:03".
export function remaining(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, "0");
  return h > 0 ? h + ":" + String(m).padStart(2, "0") + ":" + ss : m + ":" + ss;
}

// localTime is an RFC 3339 time in the reader's time zone, or the text as
// given when it does not parse.
export function localTime(t) {
  const d = new Date(t);
  return isNaN(d) ? String(t || "") : d.toLocaleString();
}
