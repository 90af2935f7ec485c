// Knowledge: the namespace's long-term knowledge by category, each key with its value, confidence,
// source and (on request) its history of values.

import { call, listAll } from "./api.js";
import { ago, empty, enumLabel, h, replace, table, time } from "./dom.js";
import { events, refresher } from "./live.js";

const CATEGORIES = ["CONVENTION", "ARCHITECTURE", "DECISION", "FACT"];

function confidence(value) {
  const percent = Math.round(Number(value) * 100);
  return h("span", { class: "confidence" }, h("span", { class: "progress small-bar", "aria-hidden": "true" },
    h("span", { class: "bar", style: { width: `${percent}%` } })), ` ${percent}%`);
}

export function render(main) {
  const category = h("select", { id: "knowledge-category" }, h("option", { value: "" }, "all categories"),
    CATEGORIES.map((c) => h("option", { value: c }, c.toLowerCase())));
  const text = h("input", { id: "knowledge-text", type: "search", placeholder: "text in key or value" });
  const body = h("div", { id: "knowledge-body" }, h("p", { class: "muted" }, "Loading…"));
  replace(main, h("h1", {}, "Knowledge"),
    h("form", { class: "filters", onsubmit: (event) => { event.preventDefault(); load(); } },
      h("label", {}, "Category ", category), h("label", {}, "Text ", text), h("button", { type: "submit" }, "Filter")),
    body);

  async function showHistory(entry, into) {
    const { knowledge } = await call("MemoryService", "GetKnowledge", { id: entry.id });
    replace(into, knowledge.history.length ? table(["Value", "Source", "Confidence", "Written", "Outcome"],
      knowledge.history.map((v) => h("tr", {}, h("td", {}, v.value), h("td", {}, v.source), h("td", {}, confidence(v.confidence)),
        h("td", {}, time(v.write_time)), h("td", {}, enumLabel(v.outcome, "KNOWLEDGE_VALUE_OUTCOME_"))))) : empty("No earlier values."));
  }

  const load = refresher(async () => {
    const entries = await listAll("MemoryService", "QueryKnowledge", {
      category: category.value ? `KNOWLEDGE_CATEGORY_${category.value}` : "KNOWLEDGE_CATEGORY_UNSPECIFIED",
      text: text.value.trim(), page_size: 200 }, "knowledge", 2000);
    if (!entries.length) { replace(body, empty("No knowledge matches.")); main.dataset.ready = "true"; return; }
    const groups = new Map();
    for (const entry of entries) {
      const name = enumLabel(entry.category, "KNOWLEDGE_CATEGORY_");
      (groups.get(name) || groups.set(name, []).get(name)).push(entry);
    }
    replace(body, [...groups].map(([name, group]) => h("section", { class: "category" }, h("h2", {}, `${name} (${group.length})`),
      table(["Key", "Value", "Confidence", "Source", "Revision", "Updated"], group.map((entry) => {
        const history = h("div", { class: "history" });
        return [h("tr", { "data-key": entry.key },
          h("td", { class: "mono" }, entry.key), h("td", {}, entry.value), h("td", {}, confidence(entry.confidence)),
          h("td", {}, entry.source), h("td", { class: "num" }, h("button", { type: "button", class: "link",
            "aria-label": `history of ${entry.key}`, onclick: () => showHistory(entry, history) }, `r${entry.revision} history`)),
          h("td", {}, ago(entry.update_time))),
        h("tr", { class: "history-row" }, h("td", { colspan: 6 }, history))];
      })))));
    main.dataset.ready = "true";
  });

  const live = events({ types: ["KNOWLEDGE_UPSERTED", "KNOWLEDGE_DELETED"], onReady: () => load(), onEvent: () => load() });
  return { stop: () => live.stop() };
}
