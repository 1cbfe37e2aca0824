// The daemon's HTTP API as the page uses it (docs/API.md is the contract).
//
// The token lives in sessionStorage, so it is gone when the tab closes, and
// it travels only in the Authorization header: never in an address, where
// it would end up in history, logs and Referer headers. That is also why the
// event stream is read with fetch() and not EventSource, which cannot send
// headers.

const tokenKey = "airlock.token";

export function token() {
  return sessionStorage.getItem(tokenKey) || "";
}

export function setToken(t) {
  sessionStorage.setItem(tokenKey, t);
}

export function clearToken() {
  sessionStorage.removeItem(tokenKey);
}

// APIError is a refused request: status is the HTTP status, code the
// daemon's snake_case error code, message its human text.
export class APIError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// call sends one JSON request and returns the decoded answer, or throws an
// APIError.
export async function call(method, path, body) {
  const headers = { Authorization: "Bearer " + token(), Accept: "application/json" };
  const init = { method, headers, cache: "no-store", credentials: "omit" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new APIError(0, "network", "The daemon did not answer (" + e.message + "). Is airlock serve running?");
  }
  let data = null;
  try {
    data = await res.json();
  } catch {
    // not JSON: the status below says what happened
  }
  if (!res.ok) {
    const code = (data && data.code) || "http_" + res.status;
    const msg = (data && data.error) || method + " " + path + ": HTTP " + res.status;
    throw new APIError(res.status, code, msg);
  }
  return data;
}

const sleep = (ms, signal) =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => { clearTimeout(t); resolve(); }, { once: true });
  });

// streamEvents follows GET /v1/events until the returned function is
// called. It reconnects after any break, sending the last event id it saw
// as Last-Event-ID so the daemon replays what happened in between.
//   onOpen()          each time the stream is (re)established; may return a
//                     promise, awaited before the state becomes "live"
//   onEvent(ev)       ev = {event, id, data}
//   onState(s)        "connecting" | "live" | "reconnecting"
//   onUnauthorized()  the token was refused; the stream stops
export function streamEvents({ onOpen, onEvent, onState, onUnauthorized }) {
  const ctl = new AbortController();
  let lastID = "";
  let delay = 1000;
  (async () => {
    onState("connecting");
    while (!ctl.signal.aborted) {
      try {
        const headers = { Authorization: "Bearer " + token(), Accept: "text/event-stream" };
        if (lastID) headers["Last-Event-ID"] = lastID;
        const res = await fetch("/v1/events", {
          headers, cache: "no-store", credentials: "omit", signal: ctl.signal,
        });
        if (res.status === 401) {
          onUnauthorized();
          return;
        }
        if (!res.ok || !res.body) throw new Error("HTTP " + res.status);
        delay = 1000;
        // "live" once the list is current: events from here on arrive
        // in the body, which buffers them while onOpen runs.
        await onOpen();
        onState("live");
        await readEvents(res.body, ctl.signal, (ev) => {
          if (ev.id !== null) lastID = ev.id;
          if (ev.data !== null) onEvent(ev);
        });
      } catch {
        // a broken stream: reconnect below
      }
      if (ctl.signal.aborted) return;
      onState("reconnecting");
      await sleep(delay, ctl.signal);
      delay = Math.min(delay * 2, 15000);
    }
  })();
  return () => ctl.abort();
}

// readEvents parses a text/event-stream body as the HTML standard says
// (lines end in CRLF, LF or CR; "data" lines join with LF; lines starting
// with ":" are comments) and calls dispatch once per event.
async function readEvents(body, signal, dispatch) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  signal.addEventListener("abort", () => reader.cancel().catch(() => {}), { once: true });
  let buf = "";
  let ev = { event: "", id: null, data: null };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    for (;;) {
      const i = buf.search(/[\r\n]/);
      if (i < 0) break;
      // A CR at the very end may be the first half of a CRLF: wait.
      if (buf[i] === "\r" && i + 1 === buf.length) break;
      const line = buf.slice(0, i);
      buf = buf.slice(i + (buf[i] === "\r" && buf[i + 1] === "\n" ? 2 : 1));
      if (line === "") {
        dispatch(ev);
        ev = { event: "", id: null, data: null };
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let val = colon < 0 ? "" : line.slice(colon + 1);
      if (val.startsWith(" ")) val = val.slice(1);
      if (field === "event") ev.event = val;
      else if (field === "data") ev.data = ev.data === null ? val : ev.data + "\n" + val;
      else if (field === "id" && !val.includes("\0")) ev.id = val;
    }
  }
}
