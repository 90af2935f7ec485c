// Tasks: every task of the namespace with status, progress, last update; filters; live.

import { call, listAll } from "./api.js";
import { ago, badge, empty, enumLabel, h, replace, table } from "./dom.js";
import { events, refresher } from "./live.js";

const STATUSES = ["PENDING", "PLANNING", "EXECUTING", "SYNTHESIZING", "PAUSED", "COMPLETED", "FAILED", "CANCELLED", "ARCHIVED"];
const TASK_EVENTS = ["TASK_CREATED", "TASK_UPDATED", "TASK_STATUS_CHANGED", "PLAN_REPLACED", "PLAN_ITEM_UPDATED",
  "PLAN_ITEM_CLAIMED", "PLAN_ITEM_CLAIM_RELEASED", "PLAN_ITEM_CLAIM_EXPIRED",
  "TASK_AUTO_PAUSED", "TASK_AUTO_ARCHIVED"];

async function progressOf(taskId) {
  const progress = await call("TaskService", "GetProgress", { task_id: taskId, recent_message_count: 1 });
  return { task: progress.task, progress: { done: progress.completed.length, total: progress.total_items } };
}

export function render(main) {
  const rows = new Map(); // task id → { task, progress }
  const statusFilter = h("select", { id: "status-filter" }, h("option", { value: "" }, "all statuses"),
    STATUSES.map((s) => h("option", { value: s }, s.toLowerCase())));
  const search = h("input", { id: "name-search", type: "search", placeholder: "name, goal or id", autocomplete: "off" });
  const body = h("div", { id: "tasks-body" });
  replace(main, h("h1", {}, "Tasks"),
    h("div", { class: "filters" },
      h("label", {}, "Status ", statusFilter), h("label", {}, "Search ", search)),
    body);

  function draw() {
    const wanted = statusFilter.value, text = search.value.trim().toLowerCase();
    const shown = [...rows.values()]
      .filter(({ task }) => !wanted || task.status === `TASK_STATUS_${wanted}`)
      .filter(({ task }) => !text || `${task.name} ${task.goal} ${task.id}`.toLowerCase().includes(text))
      .sort((a, b) => (b.task.update_time || "").localeCompare(a.task.update_time || ""));
    if (!shown.length) { replace(body, empty(rows.size ? "No task matches." : "No tasks yet.")); return; }
    replace(body, table(["Task", "Status", "Progress", "Last update", "Created"], shown.map(({ task, progress }) => {
      const percent = progress.total ? Math.round((100 * progress.done) / progress.total) : 0;
      return h("tr", { "data-task-id": task.id, "data-status": enumLabel(task.status, "TASK_STATUS_") },
        h("td", {}, h("a", { href: `#/task/${encodeURIComponent(task.id)}` }, task.name || task.id),
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
