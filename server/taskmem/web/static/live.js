// Shared by the pages: the event stream with a status indicator, and coalesced refreshes.

import { stream } from "./api.js";

export function liveIndicator(text, state) {
  const el = document.getElementById("live");
  el.textContent = text;
  el.dataset.state = state;
}

// The event log as SSE (filtered by task ids and types). onReady runs when the stream is registered,
// with the cursor it starts after: load data then, so nothing between loading and streaming is lost.
export function events({ tasks = [], types = [], onReady, onEvent, onError }) {
  const query = new URLSearchParams();
  tasks.forEach((id) => query.append("task", id));
  types.forEach((type) => query.append("type", `EVENT_TYPE_${type}`));
  let first = true;
  return stream(`/api/events?${query}`, {
    onConnected: () => liveIndicator("live", "live"),
    onDisconnected: () => liveIndicator("reconnecting…", "down"),
    onReady: (data) => { if (first) { first = false; onReady?.(Number(data.cursor)); } },
    onEvent: (event) => onEvent(event),
    // A refused key or request is not retried (api.js); only a broken connection is.
    onError: (error) => { if (!error.status || error.status >= 500) liveIndicator("reconnecting…", "down"); onError?.(error); },
  });
}

// Under a burst of events a section reloads at most this often (its first load is at once).
const RELOAD_INTERVAL_MS = 250;

// refresh() runs load() now, or once more after the running load ends (and RELOAD_INTERVAL_MS
// has passed): many events, few loads, and the server is not kept busy by one open page.
export function refresher(load) {
  let running = null, again = false;
  const run = async () => {
    do {
      again = false;
      const started = performance.now();
      try { await load(); } catch (error) { console.warn(error); }
      if (again) await new Promise((resolve) => setTimeout(resolve, Math.max(0, RELOAD_INTERVAL_MS - (performance.now() - started))));
    } while (again);
    running = null;
  };
  return () => {
    if (running) { again = true; return running; }
    running = run();
    return running;
  };
}
