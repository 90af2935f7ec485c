-- Waits on a person (issue 28, point 2; as SQLite's 0022): ListTasks with awaiting_person finds the tasks, and the items, in
-- INPUT_REQUIRED or AUTH_REQUIRED. Few rows ever are, so these partial indexes hold only them and the filter
-- reads a handful of index entries instead of every task's plan (store/tasks/tasks.list_tasks spells the
-- statuses out as these literals, which is what lets the planner use them).
CREATE INDEX IF NOT EXISTS tasks_awaiting_person ON tasks (namespace, id)
    WHERE status IN ('TASK_STATUS_AUTH_REQUIRED', 'TASK_STATUS_INPUT_REQUIRED');
CREATE INDEX IF NOT EXISTS plan_items_awaiting_person ON plan_items (namespace, task_id, plan_version)
    WHERE status IN ('PLAN_ITEM_STATUS_AUTH_REQUIRED', 'PLAN_ITEM_STATUS_INPUT_REQUIRED');
