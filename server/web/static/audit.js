// The audit view: GET /v1/audit with the form's filters, newest first.

import { call } from "./api.js";
import { el, clear, localTime } from "./dom.js";

export class AuditView {
  constructor(form, rows, errorEl, caption, { onUnauthorized }) {
    this.form = form;
    this.rows = rows;
    this.errorEl = errorEl;
    this.caption = caption;
    this.onUnauthorized = onUnauthorized;
    this.generation = 0;
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.load();
    });
  }

  // clear forgets what another login was shown.
  clear() {
    this.generation++;
    clear(this.rows);
    this.errorEl.textContent = "";
    this.caption.textContent = "Newest first.";
  }

  query() {
    const f = new FormData(this.form);
    const q = new URLSearchParams();
    const since = f.get("since");
    if (since) {
      // datetime-local is the reader's local time without a zone; the
      // daemon wants RFC 3339.
      const d = new Date(since);
      if (!isNaN(d)) q.set("since", d.toISOString());
    }
    const tool = String(f.get("tool") || "").trim();
    if (tool) q.set("tool", tool);
    if (f.get("decision")) q.set("decision", f.get("decision"));
    if (f.get("limit")) q.set("limit", f.get("limit"));
    return q.toString();
  }

  async load() {
    const gen = ++this.generation;
    const q = this.query();
    this.errorEl.textContent = "";
    let data;
    try {
      data = await call("GET", "/v1/audit" + (q ? "?" + q : ""));
    } catch (e) {
      if (e.status === 401) {
        this.onUnauthorized();
        return;
      }
      this.errorEl.textContent = "Could not load the audit log: " + e.message;
      return;
    }
    if (gen !== this.generation) return;
    const events = ((data && data.events) || []).slice().reverse();
    clear(this.rows);
    for (const e of events) {
      const req = e.requirement || {};
      this.rows.append(el("tr", { class: "decision-" + (e.decision || "none") },
        el("td", {}, el("time", { datetime: e.time || "" }, localTime(e.time))),
        el("td", {}, e.type || ""),
        el("td", {}, e.tool || ""),
        el("td", { class: "decision" }, e.decision || ""),
        el("td", {}, req.target ? el("code", {}, req.target) : ""),
        el("td", {}, e.reason || ""),
        el("td", {}, e.rule ? el("code", {}, e.rule) : ""),
        el("td", {}, e.session_id || "")));
    }
    this.caption.textContent = events.length
      ? events.length + (events.length === 1 ? " event" : " events") + ", newest first."
      : "No events match.";
  }
}
