// The page's only way to the server: JSON calls to its gRPC methods, and two SSE streams read with
// fetch() (EventSource cannot send the Authorization header). The key lives in sessionStorage.

const KEY = "taskmem.key";
const NAMESPACE = "taskmem.namespace";

export const session = {
  get key() { return sessionStorage.getItem(KEY) || ""; },
  get namespace() { return sessionStorage.getItem(NAMESPACE) || ""; },
  save(key, namespace) {
    if (key) sessionStorage.setItem(KEY, key); else sessionStorage.removeItem(KEY);
    if (namespace) sessionStorage.setItem(NAMESPACE, namespace); else sessionStorage.removeItem(NAMESPACE);
  },
};

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// Listeners told when a call fails for lack of a good key (the page then shows nothing but the key form).
const authListeners = new Set();
export function onAuthError(listener) { authListeners.add(listener); }

function headers() {
  const result = { "x-taskmem-web": "1", "content-type": "application/json" };
  if (session.key) result.authorization = `Bearer ${session.key}`;
  if (session.namespace) result["x-taskmem-namespace"] = session.namespace;
  return result;
}

async function failure(response) {
  let body = {};
  try { body = await response.json(); } catch { /* not JSON: keep the status */ }
  const error = new ApiError(response.status, body.code || String(response.status), body.message || response.statusText);
  if (response.status === 401 || response.status === 403) authListeners.forEach((listener) => listener(error));
  return error;
}

// Calls made in the same turn of the page's event loop go out as one /api/batch request.
let pending = null;

export function call(service, method, request = {}) {
  return new Promise((resolve, reject) => {
    if (!pending) {
      pending = [];
      queueMicrotask(flush);
    }
    pending.push({ service, method, request, resolve, reject });
  });
}

const MAX_BATCH = 50; // the server's limit per batch

function flush() {
  const calls = pending;
  pending = null;
  for (let start = 0; start < calls.length; start += MAX_BATCH) send(calls.slice(start, start + MAX_BATCH));
}

async function send(calls) {
  if (calls.length === 1) {
    const [{ service, method, request, resolve, reject }] = calls;
    try {
      const response = await fetch(`/api/call/${service}/${method}`, { method: "POST", headers: headers(), body: JSON.stringify(request) });
      if (!response.ok) throw await failure(response);
      resolve(await response.json());
    } catch (error) { reject(error); }
    return;
  }
  try {
    const response = await fetch("/api/batch", { method: "POST", headers: headers(),
      body: JSON.stringify({ calls: calls.map(({ service, method, request }) => ({ service, method, request })) }) });
    if (!response.ok) throw await failure(response);
    const { results } = await response.json();
    results.forEach((result, i) => {
      if (!result.error) { calls[i].resolve(result.reply); return; }
      const { status, code, message } = result.error;
      const error = new ApiError(status, code, message);
      if (status === 401 || status === 403) authListeners.forEach((listener) => listener(error));
      calls[i].reject(error);
    });
  } catch (error) { calls.forEach(({ reject }) => reject(error)); }
}

// Reads an SSE stream until stopped; on a broken connection it reconnects after a pause with
// Last-Event-ID, so nothing is missed. handlers: { onOpen(readyCursor), on<EventName>(data, id), onError(err) }.
export function stream(path, handlers) {
  const controller = new AbortController();
  let lastId = null;
  let stopped = false;

  async function run() {
    while (!stopped) {
      const requestHeaders = headers();
      if (lastId !== null) requestHeaders["last-event-id"] = lastId;
      try {
        const response = await fetch(path, { headers: requestHeaders, signal: controller.signal });
        if (!response.ok) {
          const error = await failure(response);
          handlers.onError?.(error);
          if (response.status < 500) return; // a retry cannot fix a bad key or request
        } else {
          handlers.onConnected?.();
          const ended = await read(response.body);
          if (ended) return;
        }
      } catch (error) {
        if (stopped) return;
        handlers.onError?.(error);
      }
      handlers.onDisconnected?.();
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }

  // Returns true when the server ended the stream for good (an `end` event or an error a retry cannot fix).
  async function read(body) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return false;
      buffer += value.replaceAll("\r\n", "\n");
      let boundary;
      while ((boundary = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, boundary);
        buffer = buffer.slice(boundary + 2);
        let name = "message", id = null;
        const data = [];
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue; // ping
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "event") name = text;
          else if (field === "data") data.push(text);
          else if (field === "id") id = text;
        }
        if (!data.length) continue;
        if (id !== null) lastId = id;
        const parsed = JSON.parse(data.join("\n"));
        if (name === "error") {
          handlers.onError?.(new ApiError(0, parsed.code, parsed.message));
          if (parsed.code !== "UNAVAILABLE" && parsed.code !== "RESOURCE_EXHAUSTED") return true;
          return false;
        }
        if (name === "end") { handlers.onEnd?.(); return true; }
        const handler = handlers[`on${name[0].toUpperCase()}${name.slice(1)}`];
        handler?.(parsed, id);
      }
    }
  }

  run();
  return { stop() { stopped = true; controller.abort(); } };
}

// Every page of a list method, up to `limit` items.
export async function listAll(service, method, request, field, limit = 1000) {
  const items = [];
  let token = "";
  do {
    const page = await call(service, method, { ...request, page_token: token });
    items.push(...page[field]);
    token = page.next_page_token;
  } while (token && items.length < limit);
  return items;
}
