// The page's wiring: log in and out, the two views, and the live event
// stream that keeps the approvals list current without reloading.

import { token, setToken, clearToken, streamEvents, call } from "./api.js";
import { ApprovalList } from "./approvals.js";
import { AuditView } from "./audit.js";

const $ = (id) => document.getElementById(id);

const liveText = { off: "Offline", connecting: "Connecting…", live: "Live", reconnecting: "Reconnecting…" };

let approvals = null;
let stopStream = null;
const audit = new AuditView($("audit-form"), $("audit-rows"), $("audit-error"), $("audit-caption"), {
  onUnauthorized: () => loggedOut("The daemon refused the token. Paste a valid one."),
});

function notice(text) {
  $("notice").textContent = text;
}

function setLive(state) {
  $("live").dataset.state = state;
  $("live").textContent = liveText[state];
}

function showView(name) {
  $("approvals-view").hidden = name !== "approvals";
  $("audit-view").hidden = name !== "audit";
  for (const [tab, v] of [["tab-approvals", "approvals"], ["tab-audit", "audit"]]) {
    if (v === name) $(tab).setAttribute("aria-current", "page");
    else $(tab).removeAttribute("aria-current");
  }
  if (name === "audit") audit.load();
}

function loggedOut(message) {
  if (stopStream) stopStream();
  stopStream = null;
  if (approvals) approvals.stop();
  approvals = null;
  clearToken();
  setLive("off");
  $("nav").hidden = true;
  $("live").hidden = true;
  $("logout").hidden = true;
  $("role").hidden = true;
  $("approvals-view").hidden = true;
  $("audit-view").hidden = true;
  $("login-view").hidden = false;
  $("login-error").textContent = message || "";
  $("token").value = "";
  $("token").focus();
  document.title = "airlock approvals";
}

// roleText says what the token may do, from GET /v1/whoami.
function roleText(who) {
  if (who.role === "agent") return "Agent token of " + who.agent + ": sees its own calls, cannot answer";
  const where = who.workspaces && who.workspaces.length ? " for " + who.workspaces.join(", ") : "";
  return (who.role === "operator" ? "Operator" : "Person") + " token" + where;
}

async function loggedIn() {
  let who = null;
  try {
    who = await call("GET", "/v1/whoami");
  } catch (e) {
    if (e.status === 401) {
      loggedOut("The daemon refused the token. Paste a valid one.");
      return;
    }
  }
  $("role").textContent = who ? roleText(who) : "";
  $("role").hidden = !who;
  const person = !who || who.answers;
  $("tab-audit").hidden = !person;
  $("login-view").hidden = true;
  $("login-error").textContent = "";
  $("nav").hidden = false;
  $("live").hidden = false;
  $("logout").hidden = false;
  const unauthorized = () => loggedOut("The daemon refused the token. Paste a valid one.");
  audit.clear();
  approvals = new ApprovalList($("approvals"), {
    notice,
    canAnswer: person,
    onUnauthorized: unauthorized,
    onCount: (n) => {
      $("pending-count").textContent = n ? "(" + n + ")" : "";
      $("approvals-empty").hidden = n > 0;
      document.title = (n ? "(" + n + ") " : "") + "airlock approvals";
    },
  });
  showView("approvals");
  // Every (re)connection refreshes the whole list, so nothing opened while
  // the stream was down is missed even if the daemon forgot old events.
  stopStream = streamEvents({
    onOpen: () => approvals && approvals.refresh(),
    // An event carries its approval as it is now: the page applies that
    // one, never re-fetching the list.
    onEvent: (ev) => {
      if (!["opened", "answered", "expired"].includes(ev.event) || !approvals) return;
      let a = null;
      try {
        a = JSON.parse(ev.data);
      } catch {
        return;
      }
      approvals.apply(a);
    },
    onState: setLive,
    onUnauthorized: unauthorized,
  });
}

$("login-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const t = $("token").value.trim();
  if (!t) return;
  setToken(t);
  $("token").value = "";
  loggedIn();
});
$("logout").addEventListener("click", () => loggedOut("Logged out."));
$("tab-approvals").addEventListener("click", () => showView("approvals"));
$("tab-audit").addEventListener("click", () => showView("audit"));

// A page that was reached with a token in its address (someone pasted a
// link) drops it from history before anything else happens.
if (location.search || location.hash) history.replaceState(null, "", location.pathname);

if (token()) loggedIn();
else loggedOut("");
