// The plan as a dependency graph: items in columns by depth (an item sits right of everything it
// depends on), drawn as SVG with each item's status. Laid out here; no graph library needed.

import { counted, enumLabel } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const NODE_WIDTH = 190, NODE_HEIGHT = 46, GAP_X = 56, GAP_Y = 12, PAD = 12;
const MAX_PER_COLUMN = 20; // a deep layer wraps into more columns instead of one very tall one

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  for (const child of children) el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return el;
}

function depths(items) {
  const byId = new Map(items.map((item) => [item.id, item]));
  const depth = new Map();
  const visit = (item) => {
    if (depth.has(item.id)) return depth.get(item.id);
    depth.set(item.id, 0); // the server rejects cycles; this only guards the walk
    const deps = (item.depends_on || []).map((id) => byId.get(id)).filter(Boolean);
    const d = deps.length ? 1 + Math.max(...deps.map(visit)) : 0;
    depth.set(item.id, d);
    return d;
  };
  items.forEach(visit);
  return depth;
}

// Positions {id: {x, y}}: columns by depth, each column ordered by the mean row of its dependencies.
export function layout(items) {
  const depth = depths(items);
  const layers = [];
  for (const item of [...items].sort((a, b) => a.ordinal - b.ordinal)) {
    (layers[depth.get(item.id)] ||= []).push(item);
  }
  const row = new Map();
  const positions = new Map();
  let column = 0;
  for (const layer of layers.filter(Boolean)) {
    const mean = (item) => {
      const rows = (item.depends_on || []).filter((id) => row.has(id)).map((id) => row.get(id));
      return rows.length ? rows.reduce((a, b) => a + b, 0) / rows.length : item.ordinal;
    };
    layer.sort((a, b) => mean(a) - mean(b) || a.ordinal - b.ordinal);
    layer.forEach((item, index) => {
      const sub = Math.floor(index / MAX_PER_COLUMN), r = index % MAX_PER_COLUMN;
      row.set(item.id, r);
      positions.set(item.id, { x: PAD + (column + sub) * (NODE_WIDTH + GAP_X), y: PAD + r * (NODE_HEIGHT + GAP_Y) });
    });
    column += Math.ceil(layer.length / MAX_PER_COLUMN);
  }
  return positions;
}

function clip(text, length) {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}

// An <svg> of the plan; onSelect(item) runs when a node is clicked or chosen with Enter/Space.
export function planGraph(items, onSelect) {
  const positions = layout(items);
  let width = 0, height = 0;
  for (const { x, y } of positions.values()) {
    width = Math.max(width, x + NODE_WIDTH + PAD);
    height = Math.max(height, y + NODE_HEIGHT + PAD);
  }
  const root = svg("svg", { class: "plan-graph", width, height, viewBox: `0 0 ${width} ${height}`, role: "group",
    "aria-label": `plan graph, ${counted(items.length, "item")}` });
  root.append(svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7,
    markerHeight: 7, orient: "auto-start-reverse" }, svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrowhead" }))));
  const edges = svg("g", { class: "edges" });
  const nodes = svg("g", { class: "nodes" });
  for (const item of items) {
    const to = positions.get(item.id);
    for (const dep of item.depends_on || []) {
      const from = positions.get(dep);
      if (!from) continue;
      const x1 = from.x + NODE_WIDTH, y1 = from.y + NODE_HEIGHT / 2, x2 = to.x, y2 = to.y + NODE_HEIGHT / 2;
      const bend = Math.max(24, (x2 - x1) / 2);
      edges.append(svg("path", { class: "edge", "data-from": dep, "data-to": item.id, "marker-end": "url(#arrow)",
        d: `M ${x1} ${y1} C ${x1 + bend} ${y1}, ${x2 - bend} ${y2}, ${x2} ${y2}` }));
    }
    const status = enumLabel(item.status, "PLAN_ITEM_STATUS_");
    const held = item.holder_id ? ` (held by ${item.holder_id})` : "";
    const node = svg("g", { class: `node s-${status.replaceAll(" ", "-")}`, "data-id": item.id, "data-status": status,
      "data-holder": item.holder_id || null, transform: `translate(${to.x} ${to.y})`, tabindex: 0, role: "button",
      "aria-label": `${item.ordinal + 1}. ${item.title}: ${status}${held}` },
    svg("title", {}, `${item.ordinal + 1}. ${item.title} — ${status}${held}`),
    svg("rect", { width: NODE_WIDTH, height: NODE_HEIGHT, rx: 6 }),
    svg("text", { x: 8, y: 18, class: "node-title" }, clip(`${item.ordinal + 1}. ${item.title}`, 26)),
    svg("text", { x: 8, y: 36, class: "node-status" },
      clip(status + (item.holder_id ? ` · ${item.holder_id}` : "") + (item.active_issue ? " ⚠" : ""), 28)));
    const choose = () => onSelect(item);
    node.addEventListener("click", choose);
    node.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); choose(); }
    });
    nodes.append(node);
  }
  root.append(edges, nodes);
  return root;
}
