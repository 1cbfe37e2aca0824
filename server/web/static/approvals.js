// The pending-approvals list: one card per approval, showing what the call
// would do (the command and its parsed words, a fetch's whole URL and
// prompt, the diff of an edit, the hosts it connects to), warnings about
// what its text hides, what it requires, the rule an "always" answer saves,
// the time left, and one button per answer, each named after its call. An
// "always" answer whose rule allows more than the call asks first.

import { call } from "./api.js";
import { el, clear, pretty, remaining, localTime } from "./dom.js";

// "Allow once" is the primary action: it allows this call and nothing
// more. The "always" answers save rules, so they are plain buttons.
const answers = [
  { answer: "once", label: "Allow once", cls: "allow primary" },
  { answer: "always", label: "Always allow", cls: "allow" },
  { answer: "deny", label: "Deny", cls: "deny" },
  { answer: "always_deny", label: "Always deny", cls: "deny" },
];

const answered = {
  once: "Allowed once",
  always: "Always allowed",
  deny: "Denied",
  always_deny: "Always denied",
};

// How long a card's buttons ignore clicks after it appears or moves, in
// milliseconds; <html data-settle-ms> changes it (the tests lengthen it to
// look at a moved card).
const settleMs = () => Number(document.documentElement.dataset.settleMs) || 600;

// How long an "always" answer's allow rule lasts; "" is until it is
// removed. (An "always deny" lasts until removed.)
const durations = [
  ["", "until removed"],
  ["10m", "10 minutes"],
  ["1h", "1 hour"],
  ["8h", "8 hours"],
  ["24h", "24 hours"],
];

export class ApprovalList {
  // root is the <ul> the cards go in; notice(text) tells the person what
  // happened; onUnauthorized() is called when the token is refused.
  constructor(root, { notice, onUnauthorized, onCount, canAnswer }) {
    this.root = root;
    // An agent's token never answers: its cards have no buttons.
    this.canAnswer = canAnswer !== false;
    this.notice = notice;
    this.onUnauthorized = onUnauthorized;
    this.onCount = onCount;
    this.cards = new Map(); // approval id -> {li, expires, buttons, status}
    this.generation = 0;
    this.timer = setInterval(() => this.tick(), 1000);
  }

  // refresh fetches the pending list, page by page, and shows it. Of
  // overlapping refreshes only the newest one's answer is shown.
  async refresh() {
    const gen = ++this.generation;
    const list = [];
    try {
      let after = "";
      for (let page = 0; page < 100; page++) {
        const data = await call("GET", "/v1/approvals" + (after ? "?after=" + encodeURIComponent(after) : ""));
        list.push(...((data && data.approvals) || []));
        if (!data || !data.next) break;
        after = data.next;
      }
    } catch (e) {
      if (this.stopped) return;
      if (e.status === 401) this.onUnauthorized();
      else this.notice("Could not load approvals: " + e.message);
      return;
    }
    if (gen !== this.generation || this.stopped) return;
    this.render(list);
  }

  // apply shows what one event (or answer) says of one approval: a pending
  // one joins the list in its place, any other leaves it. Nothing else is
  // fetched.
  apply(a) {
    if (!a || !a.id || this.stopped) return;
    const list = [...this.cards.values()].map((c) => c.a).filter((x) => x.id !== a.id);
    if (a.state === "pending" && Date.parse(a.expires_at) > Date.now()) list.push(a);
    list.sort((x, y) => (x.created_at < y.created_at ? -1 : x.created_at > y.created_at ? 1 : x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
    this.render(list);
  }

  // render makes the list show exactly these approvals, in this order.
  // Cards already shown are kept as they are, so a chosen duration and the
  // keyboard focus survive another approval arriving.
  render(list) {
    const ids = new Set(list.map((a) => a.id));
    const tops = new Map([...this.cards].map(([id, c]) => [id, c.li.offsetTop]));
    // Gone cards go first, so the ones that stay are not moved: moving an
    // element drops the keyboard focus inside it.
    for (const [id, c] of this.cards) {
      if (ids.has(id)) continue;
      const hadFocus = c.li.contains(document.activeElement);
      c.li.remove();
      this.cards.delete(id);
      if (hadFocus) document.getElementById("approvals-title").focus();
    }
    let prev = null;
    for (const a of list) {
      let c = this.cards.get(a.id);
      if (!c) {
        c = this.card(a);
        this.cards.set(a.id, c);
      }
      const want = prev ? prev.nextSibling : this.root.firstChild;
      if (want !== c.li) this.root.insertBefore(c.li, want);
      prev = c.li;
    }
    for (const [id, c] of this.cards) {
      if (c.li.offsetTop !== tops.get(id)) this.settle(c);
    }
    this.tick();
    this.onCount(list.length);
  }

  // settle ignores a card's buttons for a moment after it appeared or
  // moved: a card that slid under the pointer (one above it was answered
  // elsewhere, or a double click's second half) must not take a click
  // meant for another call.
  settle(c) {
    c.li.dataset.settling = "true";
    for (const b of c.buttons) b.setAttribute("aria-disabled", "true");
    clearTimeout(c.settleTimer);
    c.settleTimer = setTimeout(() => {
      delete c.li.dataset.settling;
      for (const b of c.buttons) b.removeAttribute("aria-disabled");
    }, settleMs());
  }

  tick() {
    const now = Date.now();
    for (const c of this.cards.values()) {
      const left = c.expires - now;
      c.countdown.textContent = isNaN(left) ? "unknown" : left > 0 ? remaining(left) : "expiring…";
      c.li.classList.toggle("urgent", left < 30000);
    }
  }

  stop() {
    this.stopped = true;
    clearInterval(this.timer);
    this.cards.clear();
    clear(this.root);
  }

  card(a) {
    const view = a.view || {};
    const idp = "apr-" + this.cards.size + "-" + Date.now();
    const countdown = el("time", { datetime: a.expires_at, class: "countdown" });
    const status = el("p", { class: "card-status", role: "alert" });
    const forSel = el("select", { id: idp + "-for" },
      durations.map(([v, t]) => el("option", { value: v }, t)));
    // Each button names its call, for a screen reader moving between
    // the buttons of many cards.
    const callName = (a.tool || "?") + " " + (view.summary || "");
    const buttons = answers.map((x) =>
      el("button", {
        type: "button", class: "answer " + x.cls, "data-answer": x.answer,
        "aria-label": x.label + ": " + callName,
      }, x.label));
    const confirmBox = el("div", { class: "confirm", role: "group", "aria-label": "Confirm always allow: " + callName, hidden: true });
    const risks = view.risks || [];
    const li = el("li", {
      class: "approval" + (risks.length ? " risky" : ""), "data-id": a.id, "data-tool": a.tool,
      "aria-labelledby": idp + "-title",
    },
      el("header", { class: "card-head" },
        el("h3", { id: idp + "-title" },
          el("span", { class: "tool" }, a.tool || "?"), " ",
          el("span", { class: "summary" }, view.summary || "")),
        el("p", { class: "expiry" }, "Expires in ", countdown)),
      renderRisks(risks),
      el("dl", { class: "who" },
        el("dt", {}, "Workspace"), el("dd", {}, a.workspace || "—"),
        el("dt", {}, "Agent"), el("dd", {}, a.agent || "—"),
        el("dt", {}, "Session"), el("dd", {}, a.session || "—"),
        el("dt", {}, "Opened"), el("dd", {}, localTime(a.created_at))),
      renderInput(a, view),
      renderRequirements(view.requirements),
      renderRules(view),
      this.canAnswer
        ? el("div", { class: "answers", role: "group", "aria-label": "Answer" },
          el("span", { class: "for" },
            el("label", { for: idp + "-for" }, "“Always allow” lasts"), " ", forSel),
          buttons)
        : el("p", { class: "no-answer" }, "A person answers this call; this token is an agent's."),
      confirmBox,
      status);
    const c = { a, li, countdown, status, buttons, expires: Date.parse(a.expires_at) };
    const broader = view.always_broader || [];
    for (const b of buttons) {
      b.addEventListener("click", () => {
        if (c.li.dataset.settling) return;
        if (b.dataset.answer === "always" && broader.length) {
          this.confirmAlways(a, c, confirmBox, broader, callName, b, () => forSel.value);
          return;
        }
        confirmBox.hidden = true;
        this.answer(a, c, b.dataset.answer, forSel.value);
      });
    }
    return c;
  }

  // confirmAlways asks before an "always" answer whose rules allow more
  // than this call (every connection to a host, every call of a tool):
  // the person reads what the rule allows, then saves it or goes back.
  confirmAlways(a, c, box, broader, callName, always, forValue) {
    clear(box);
    const yes = el("button", { type: "button", class: "allow", "data-confirm": "always", "aria-label": "Save the broader rule: " + callName },
      "Save the broader rule");
    const no = el("button", { type: "button", class: "quiet", "data-confirm": "cancel", "aria-label": "Cancel always allow: " + callName },
      "Cancel");
    box.append(
      el("p", {}, "“Always allow” saves a rule that allows more than this call:"),
      el("ul", {}, broader.map((t) => el("li", {}, t))),
      el("p", {}, "“Allow once” allows only this call."),
      yes, " ", no);
    box.hidden = false;
    yes.addEventListener("click", () => {
      if (c.li.dataset.settling) return;
      box.hidden = true;
      this.answer(a, c, "always", forValue());
    });
    no.addEventListener("click", () => {
      box.hidden = true;
      always.focus();
    });
    c.buttons = c.buttons.filter((b) => b.isConnected).concat(yes, no);
    yes.focus();
  }

  async answer(a, c, answer, forDur) {
    const body = { answer };
    if (forDur && answer === "always") body.for = forDur;
    for (const b of c.buttons) b.disabled = true;
    c.status.textContent = "Sending…";
    let got = null;
    try {
      got = await call("POST", "/v1/approvals/" + encodeURIComponent(a.id), body);
      c.li.classList.add("done");
      c.status.textContent = answered[answer] + ".";
      this.notice(answered[answer] + ": " + a.tool + " " + ((a.view && a.view.summary) || ""));
    } catch (e) {
      if (e.status === 401) {
        this.onUnauthorized();
        return;
      }
      const why = {
        already_answered: "Someone already answered this call.",
        expired: "This approval expired before the answer arrived; the call was denied.",
        not_found: "The daemon no longer knows this approval.",
      }[e.code] || e.message;
      c.status.textContent = why;
      for (const b of c.buttons) b.disabled = false;
      // Refused: the approval as it is now says whether the card stays.
      try {
        got = await call("GET", "/v1/approvals/" + encodeURIComponent(a.id));
      } catch (e2) {
        got = e2.status === 404 ? { id: a.id, state: "gone" } : null;
      }
    }
    if (got) this.apply(got);
  }
}

// renderInput shows the call's input in the most readable form the view
// offers, and the raw input beneath it.
function renderInput(a, view) {
  const box = el("div", { class: "input" });
  if (view.command) {
    box.append(el("h4", {}, "Command"),
      el("pre", { class: "command" }, el("code", {}, view.command.text || "")));
    const parts = view.command.parts || [];
    if (parts.length) {
      box.append(el("ol", { class: "parts", "aria-label": "Parsed commands" },
        parts.map((p) => el("li", {},
          Array.isArray(p.argv)
            ? el("ul", { class: "argv", "aria-label": "Arguments" },
              p.argv.map((w) => el("li", { class: "chip" }, String(w))))
            : el("pre", {}, pretty(p))))));
    }
  }
  if (view.fetch) {
    // The whole URL: its path and query are where data leaves.
    box.append(el("h4", {}, "Fetches"),
      el("p", { class: "url" }, el("code", {}, view.fetch.url || "")),
      el("h4", {}, "Prompt"),
      el("pre", { class: "prompt" }, view.fetch.prompt || ""));
  }
  if (view.diff) {
    box.append(el("h4", {}, "Changes"),
      el("pre", { class: "diff" }, view.diff.replace(/\n$/, "").split("\n").map((line) =>
        el("span", { class: diffClass(line) }, line + "\n"))));
  }
  if (view.network && view.network.length) {
    box.append(el("h4", {}, "Connects to"),
      el("ul", { class: "network" }, view.network.map((h) => el("li", {}, el("code", {}, String(h))))));
  }
  const raw = el("details", { class: "raw" }, el("summary", {}, "Input as sent"),
    el("pre", {}, pretty(a.input)));
  if (!view.command && !view.fetch && !view.diff && !(view.network && view.network.length)) raw.open = true;
  box.append(raw);
  return box;
}

// renderRisks marks what the call's text hides: parts only known when it
// runs, a download or decoded data run as code, a read of a denied path.
function renderRisks(risks) {
  if (!risks.length) return null;
  return el("ul", { class: "risks", "aria-label": "Warnings" },
    risks.map((r) => el("li", { class: "risk", "data-risk": r.code || "" }, el("strong", {}, "Warning: "), r.text || "")));
}

function diffClass(line) {
  if (line.startsWith("+++") || line.startsWith("---")) return "meta";
  if (line.startsWith("@@")) return "hunk";
  if (line.startsWith("+")) return "add";
  if (line.startsWith("-")) return "del";
  return "ctx";
}

function renderRequirements(reqs) {
  if (!reqs || !reqs.length) return null;
  return el("div", { class: "reqs" },
    el("h4", {}, "Requirements"),
    el("table", {},
      el("thead", {}, el("tr", {},
        ["Kind", "Target", "Access", "Why"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, reqs.map((r) => el("tr", { class: "access-" + (r.access || "") },
        el("td", {}, r.kind || ""), el("td", {}, el("code", {}, r.target || "")),
        el("td", {}, r.access || ""), el("td", {}, r.why || ""))))));
}

function renderRules(view) {
  const list = (title, rules) => rules && rules.length
    ? [el("dt", {}, title), el("dd", {}, el("ul", {}, rules.map((r) => el("li", {}, el("code", {}, r)))))]
    : [];
  const items = [
    ...list("“Always allow” saves", view.always_rules),
    ...list("“Always deny” saves", view.always_deny_rules),
  ];
  // The daemon saves no allow rule for a requirement an ask rule sent
  // here: that rule would ask again, and saying so beats a surprise.
  if ((view.requirements || []).length && !(view.always_rules || []).length) {
    items.unshift(el("dt", {}, "“Always allow” saves"),
      el("dd", { class: "no-rule" }, "no rule: an ask rule covers this call, so it will be asked again"));
  }
  return items.length ? el("dl", { class: "rules" }, items) : null;
}
