// Search: the memory archive by hybrid, full-text or semantic match, with filters and highlighted snippets.

import { call } from "./api.js";
import { badge, empty, enumLabel, h, highlighted, marked, replace } from "./dom.js";

const TYPES = ["DECISION", "ERROR", "TOOL_RESULT", "USER_INSTRUCTION", "DISCOVERY", "ARTIFACT", "CONTEXT"];

export function render(main, params) {
  const query = h("input", { id: "search-query", type: "search", required: true, placeholder: "what to look for", value: params.q || "" });
  const mode = h("select", { id: "search-mode" }, ["HYBRID", "FULLTEXT", "SEMANTIC"].map((m) =>
    h("option", { value: m }, m === "FULLTEXT" ? "full text" : m.toLowerCase())));
  const task = h("input", { id: "search-task", type: "text", placeholder: "task id", value: params.task || "" });
  const tags = h("input", { id: "search-tags", type: "text", placeholder: "tag1, tag2" });
  const limit = h("input", { id: "search-limit", type: "number", min: 1, max: 100, value: 20 });
  const types = TYPES.map((t) => h("label", { class: "check" }, h("input", { type: "checkbox", value: t }), ` ${t.toLowerCase().replaceAll("_", " ")}`));
  const results = h("div", { id: "search-results", "aria-live": "polite" });

  async function search() {
    const text = query.value.trim();
    if (!text) return;
    replace(results, h("p", { class: "muted" }, "Searching…"));
    try {
      const response = await call("MemoryService", "SearchMemories", {
        query: text, mode: `SEARCH_MODE_${mode.value}`, limit: Number(limit.value) || 20,
        filter: { task_id: task.value.trim(), tags: tags.value.split(",").map((t) => t.trim()).filter(Boolean),
          types: types.map((label) => label.firstChild).filter((box) => box.checked).map((box) => `MEMORY_TYPE_${box.value}`) } });
      replace(results,
        h("p", { class: "muted" }, `${response.hits.length} hit${response.hits.length === 1 ? "" : "s"} · ran ${enumLabel(response.mode, "SEARCH_MODE_")}`),
        response.hits.length ? h("ol", { class: "hits" }, response.hits.map((hit) => h("li", { class: "hit" },
          h("div", { class: "hit-head" }, badge(hit.entry.type, "MEMORY_TYPE_"), h("strong", {}, highlighted(hit.entry.summary, text)),
            h("span", { class: "muted" }, `score ${Number(hit.score).toPrecision(3)} · by ${hit.found_by.map((m) => enumLabel(m, "SEARCH_MODE_")).join(" + ")}`)),
          // The snippet marks the matches of the best field; when that field is the summary shown above, show the detail.
          hit.snippet && hit.snippet.replace(/[[\]]/g, "") !== hit.entry.summary ? h("p", { class: "snippet" }, marked(hit.snippet))
            : hit.entry.detail && h("p", { class: "snippet" }, highlighted(hit.entry.detail.slice(0, 300), text)),
          h("div", { class: "small muted" }, hit.entry.task_id && h("a", { href: `#/task/${encodeURIComponent(hit.entry.task_id)}` }, hit.entry.task_id),
            hit.entry.tags.length ? ` · tags: ${hit.entry.tags.join(", ")}` : "")))) : empty("Nothing found."));
    } catch (error) {
      replace(results, h("p", { class: "error", role: "alert" }, `${error.code}: ${error.message}`));
    }
  }

  replace(main, h("h1", {}, "Search memory"),
    h("form", { class: "filters search-form", role: "search", onsubmit: (event) => { event.preventDefault(); search(); } },
      h("label", {}, "Query ", query), h("label", {}, "Mode ", mode), h("label", {}, "Task ", task),
      h("label", {}, "Tags ", tags), h("label", {}, "Limit ", limit),
      h("fieldset", {}, h("legend", {}, "Types"), types), h("button", { type: "submit" }, "Search")),
    results);
  main.dataset.ready = "true";
  if (query.value) search();
  return { stop() {} };
}
