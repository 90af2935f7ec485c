// Small DOM and formatting helpers. Text always goes in as text nodes, never as HTML.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (name === "class") el.className = value;
    else if (name === "style") Object.assign(el.style, value); // CSSOM: the CSP refuses style attributes
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

// "TASK_STATUS_IN_PROGRESS" with prefix "TASK_STATUS_" → "in progress".
export function enumLabel(value, prefix) {
  if (!value) return "";
  return String(value).replace(prefix, "").toLowerCase().replaceAll("_", " ");
}

export function badge(value, prefix) {
  const label = enumLabel(value, prefix);
  return h("span", { class: `badge s-${label.replaceAll(" ", "-")}`, "data-status": label }, label);
}

// One formatter for every timestamp: toLocaleString() builds a new one per call, which a page of
// hundreds of timestamps feels.
const DATE_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: "short", timeStyle: "medium", hour12: false });

// "1 item", "3 items": a count with its noun.
export function counted(count, noun) {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

export function time(iso) {
  if (!iso) return h("span", { class: "muted" }, "—");
  return h("time", { datetime: iso, title: iso }, DATE_TIME.format(new Date(iso)));
}

export function ago(iso) {
  if (!iso) return h("span", { class: "muted" }, "—");
  const seconds = Math.max(0, (Date.now() - new Date(iso).getTime()) / 1000);
  const text = seconds < 60 ? `${Math.round(seconds)} s ago` : seconds < 3600 ? `${Math.round(seconds / 60)} min ago`
    : seconds < 86400 ? `${Math.round(seconds / 3600)} h ago` : `${Math.round(seconds / 86400)} d ago`;
  return h("time", { datetime: iso, title: DATE_TIME.format(new Date(iso)) }, text);
}

// Proto JSON durations are strings such as "1.500s".
export function duration(text) {
  if (!text) return "";
  const seconds = parseFloat(text);
  if (Number.isNaN(seconds)) return text;
  return seconds < 1 ? `${Math.round(seconds * 1000)} ms` : seconds < 120 ? `${seconds.toFixed(1)} s`
    : `${(seconds / 60).toFixed(1)} min`;
}

export function bytes(value) {
  if (value === undefined || value === null || value === "") return "—";
  const n = Number(value);
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function table(headers, rows, attrs = {}) {
  return h("table", attrs,
    h("thead", {}, h("tr", {}, headers.map((text) => h("th", { scope: "col" }, text)))),
    h("tbody", {}, rows));
}

// Rows kept by key in a tbody, in the order of items ({ key, build, refresh? }): a row is built once for its key
// and moved only when out of place, so a field in it keeps its focus and text however often the rest redraws. A
// key that says what the row shows (an id and a status) gets a new row when that changes. rows: Map key → row.
export function keepRows(tbody, rows, items) {
  const wanted = new Set(items.map((item) => item.key));
  for (const [key, row] of rows) if (!wanted.has(key)) { row.remove(); rows.delete(key); }
  items.forEach((item, index) => {
    let row = rows.get(item.key);
    if (!row) { row = item.build(); rows.set(item.key, row); }
    item.refresh?.(row);
    if (tbody.children[index] !== row) tbody.insertBefore(row, tbody.children[index] ?? null);
  });
}

export function empty(text) {
  return h("p", { class: "muted empty" }, text);
}

// Text with the parts between [ and ] (FTS5 snippet marks) shown as <mark>.
export function marked(text) {
  const parts = [];
  const pattern = /\[([^\]]*)\]/g;
  let last = 0;
  for (let match; (match = pattern.exec(text)); last = pattern.lastIndex) {
    parts.push(text.slice(last, match.index), h("mark", {}, match[1]));
  }
  parts.push(text.slice(last));
  return parts;
}

// Text with every word of the query shown as <mark> (for hits that carry no snippet).
export function highlighted(text, query) {
  const words = query.split(/\s+/).filter((w) => w.length > 1).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  if (!words.length) return [text];
  const pattern = new RegExp(`(${words.join("|")})`, "gi");
  return text.split(pattern).map((part, i) => (i % 2 ? h("mark", {}, part) : part));
}
