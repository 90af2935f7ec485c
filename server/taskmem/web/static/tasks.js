// Tasks: every task of the namespace with status, progress, last update; filters; live. Above them, the
// questions waiting on a person (waits of kind INPUT or AUTH), each with a form that answers it (ResolveWait).

import { call, listAll } from "./api.js";
import { ago, badge, empty, enumLabel, h, keepRows, replace, table } from "./dom.js";
import { events, refresher } from "./live.js";

const STATUSES = ["PENDING", "PLANNING", "EXECUTING", "SYNTHESIZING", "INPUT_REQUIRED", "AUTH_REQUIRED", "PAUSED",
  "COMPLETED", "FAILED", "CANCELLED", "ARCHIVED"];
const AWAITING = "AWAITING_PERSON"; // the filter for tasks with a question open (the task or one of its items)
const TASK_EVENTS = ["TASK_CREATED", "TASK_UPDATED", "TASK_STATUS_CHANGED", "PLAN_REPLACED", "PLAN_ITEM_UPDATED",
  "PLAN_ITEM_CLAIMED", "PLAN_ITEM_CLAIM_RELEASED", "PLAN_ITEM_CLAIM_EXPIRED",
  "TASK_AUTO_PAUSED", "TASK_AUTO_ARCHIVED",
  "WAIT_CREATED", "WAIT_RESOLVED", "WAIT_TIMED_OUT", "WAIT_CANCELLED", "WAIT_FAILED"];

async function progressOf(taskId) {
  const progress = await call("TaskService", "GetProgress", { task_id: taskId, recent_message_count: 1 });
  const asks = progress.open_waits.filter((wait) => wait.external_kind && wait.external_kind !== "EXTERNAL_WAIT_KIND_UNSPECIFIED");
  return { task: progress.task, progress: { done: progress.completed.length, total: progress.total_items }, asks };
}

// One open question: who must answer what, for which task (and item), and a form that answers or refuses it.
function askRow(task, wait, showError) {
  const answer = h("input", { type: "text", class: "answer-text", "aria-label": `answer to ${wait.question}`,
    placeholder: wait.external_kind === "EXTERNAL_WAIT_KIND_AUTH" ? "what you authorised" : "your answer" });
  const status = h("span", { class: "muted small", role: "status" });
  const resolve = async (waitStatus) => {
    if (!answer.value.trim()) { status.textContent = "write an answer first"; answer.focus(); return; }
    try {
      await call("WaitService", "ResolveWait", { wait_id: wait.wait_id, result: answer.value.trim(), status: waitStatus });
      status.textContent = "sent";
    } catch (error) { showError(error, status); }
  };
  const form = h("form", { class: "answer-form", onsubmit: (event) => { event.preventDefault(); resolve("WAIT_STATUS_RESOLVED"); } },
    answer, h("button", { type: "submit", class: "answer-wait" }, "Answer"),
    h("button", { type: "button", class: "refuse-wait danger", onclick: () => resolve("WAIT_STATUS_FAILED") }, "Refuse"), status);
  return h("tr", { "data-wait-id": wait.wait_id },
    h("td", { class: "task" }, h("a", { href: `#/task/${encodeURIComponent(task.id)}` }, task.name || task.id),
      wait.plan_item_id && h("div", { class: "muted small" }, `item ${wait.plan_item_id}`)),
    h("td", {}, wait.resolver || "anyone"),
    h("td", {}, badge(wait.external_kind, "EXTERNAL_WAIT_KIND_")),
    h("td", { class: "question" }, wait.question),
    h("td", { class: "asked" }, ago(wait.start_time)),
    h("td", {}, form));
}

export function render(main) {
  const rows = new Map(); // task id → { task, progress }
  const statusFilter = h("select", { id: "status-filter" }, h("option", { value: "" }, "all statuses"),
    h("option", { value: AWAITING }, "waiting on a person"),
    STATUSES.map((s) => h("option", { value: s }, s.toLowerCase().replaceAll("_", " "))));
  const search = h("input", { id: "name-search", type: "search", placeholder: "name, goal or id", autocomplete: "off" });
  const body = h("div", { id: "tasks-body" });
  const asking = h("section", { id: "awaiting-person", hidden: true });
  const askTable = table(["Task", "Who", "Needs", "Question", "Asked", "Answer"], [], { id: "awaiting-table" });
  const askBody = askTable.querySelector("tbody");
  replace(asking, h("h2", {}), askTable);
  const askRows = new Map(); // wait id → its row, kept while the question is open
  replace(main, h("h1", {}, "Tasks"), asking,
    h("div", { class: "filters" },
      h("label", {}, "Status ", statusFilter), h("label", {}, "Search ", search)),
    body);

  // Rows are added and removed, never drawn anew: a person typing an answer keeps the field, its focus and
  // its text however much news of the task redraws the rest of the page.
  function drawAsks() {
    const asks = [...rows.values()].flatMap(({ task, asks }) => asks.map((wait) => ({ task, wait })))
      .sort((a, b) => (a.wait.start_time || "").localeCompare(b.wait.start_time || ""));
    keepRows(askBody, askRows, asks.map(({ task, wait }) => ({
      key: wait.wait_id,
      build: () => askRow(task, wait, (error, where) => { where.textContent = `${error.code}: ${error.message}`; }),
      refresh: (row) => {
        row.querySelector("td.task a").textContent = task.name || task.id;
        replace(row.querySelector("td.asked"), ago(wait.start_time));
      },
    })));
    asking.hidden = !asks.length;
    asking.querySelector("h2").textContent = `Waiting on a person (${asks.length})`;
  }

  function draw() {
    drawAsks();
    const wanted = statusFilter.value, text = search.value.trim().toLowerCase();
    const shown = [...rows.values()]
      .filter(({ task, asks }) => !wanted || (wanted === AWAITING ? asks.length > 0 : task.status === `TASK_STATUS_${wanted}`))
      .filter(({ task }) => !text || `${task.name} ${task.goal} ${task.id}`.toLowerCase().includes(text))
      .sort((a, b) => (b.task.update_time || "").localeCompare(a.task.update_time || ""));
    if (!shown.length) { replace(body, empty(rows.size ? "No task matches." : "No tasks yet.")); return; }
    replace(body, table(["Task", "Status", "Progress", "Last update", "Created"], shown.map(({ task, progress }) => {
      const percent = progress.total ? Math.round((100 * progress.done) / progress.total) : 0;
      return h("tr", { "data-task-id": task.id, "data-status": enumLabel(task.status, "TASK_STATUS_") },
        h("td", { class: "task" }, h("a", { href: `#/task/${encodeURIComponent(task.id)}` }, task.name || task.id),
          h("div", { class: "muted small" }, task.goal.slice(0, 120))),
        h("td", {}, badge(task.status, "TASK_STATUS_")),
        h("td", {}, h("div", { class: "progress", role: "progressbar", "aria-valuemin": 0, "aria-valuemax": progress.total,
          "aria-valuenow": progress.done, "aria-label": `${progress.done} of ${progress.total} plan items done` },
        h("div", { class: "bar", style: { width: `${percent}%` } })),
        h("span", { class: "progress-text" }, `${progress.done}/${progress.total}`)),
        h("td", {}, ago(task.update_time)),
        h("td", {}, ago(task.create_time)));
    }), { id: "tasks-table" }));
  }
  statusFilter.addEventListener("change", draw);
  search.addEventListener("input", draw);

  async function upsert(taskId) {
    rows.set(taskId, await progressOf(taskId));
  }

  async function loadAll() {
    const tasks = await listAll("TaskService", "ListTasks", { page_size: 200 }, "tasks", 1000);
    await Promise.all(tasks.map((task) => upsert(task.id))); // batched by api.js
    main.dataset.ready = "true";
    draw();
  }

  // Each task reloads at most every 250 ms however busy it is, and the table redraws once a frame.
  const refreshers = new Map();
  let drawScheduled = false;
  const scheduleDraw = () => {
    if (drawScheduled) return;
    drawScheduled = true;
    requestAnimationFrame(() => { drawScheduled = false; draw(); });
  };
  function refreshTask(id) {
    if (!refreshers.has(id)) refreshers.set(id, refresher(async () => { await upsert(id); scheduleDraw(); }));
    refreshers.get(id)();
  }

  const live = events({
    types: TASK_EVENTS,
    onReady: () => loadAll().catch(showError),
    onEvent: (event) => { if (event.task_id) refreshTask(event.task_id); },
  });
  function showError(error) { replace(body, h("p", { class: "error" }, error.message)); }
  return { stop: () => live.stop() };
}
