"""The role and task-scope check of each call (the rules are core/access.RPC_RULES).

A role below the RPC's is refused before anything is read. A key scoped to tasks has the task its call
names looked up (directly, or through the action or wait it names) and checked against its scope; every
refusal of a scoped key reads the same, whatever the task's existence or namespace.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from taskmem.api.scope import CallScope
from taskmem.core.access import UNCLASSIFIED, Rule, Target, TaskScope, task_labels
from taskmem.core.errors import RoleDenied, TaskDenied
from taskmem.store.storage import Storage
from taskmem.store.tasks import task_access as access_store


def check_role(scope: CallScope, rule: Rule | None, method: str) -> None:
    """RoleDenied when the caller's key may not call this RPC. A method no rule classifies (a service added
    without its rows in RPC_RULES, which tests/unit/test_rpc_rules.py catches) needs the admin role."""
    if scope.key is None:
        return
    rule = rule or UNCLASSIFIED
    if scope.role < rule.role:
        raise RoleDenied(f"this key's role is {scope.role.label}; {method} needs {rule.role.label}",
                         role=scope.role.label, required=rule.role.label)


def _field(request: Any, path: str) -> str:
    value = request
    for part in path.split("."):
        value = getattr(value, part)
    return str(value)


def _denied(task_id: str) -> TaskDenied:
    if not task_id:
        return TaskDenied("this key is scoped to its own tasks: name one of them (task_id)")
    return TaskDenied(f"this key is scoped to its own tasks; it may not use task {task_id!r}", task_id=task_id)


class TaskAccess:
    """Checks a scoped key's calls against the tasks it may touch."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    async def holds(self, scope: CallScope, task_id: str) -> bool:
        assert scope.key is not None and scope.key.scope is not None
        task_scope = scope.key.scope
        if not task_id:
            return False
        if task_id in task_scope.task_ids:
            return True
        if not (task_scope.created or task_scope.labels):
            return False
        owned = await self._storage.read(access_store.task_ownership, scope.namespace, task_id)
        return owned is not None and task_scope.holds(task_id, owned.creator_key_id, owned.labels, scope.key_id)

    async def check(self, scope: CallScope, rule: Rule | None, request: Any) -> None:
        """TaskDenied unless the call stays within the key's tasks (nothing to check for an unscoped key)."""
        if scope.key is None or scope.key.scope is None:
            return
        task_scope: TaskScope = scope.key.scope
        rule = rule or UNCLASSIFIED
        if rule.target is Target.NAMESPACE:
            raise TaskDenied("this key is scoped to its own tasks; this call is not about one task")
        if rule.target is Target.TASK_LIST:
            return  # the servicer lists the scope's tasks only (visible_tasks)
        if rule.target is Target.NEW_TASK:
            labels = task_labels(_metadata(request))
            if not task_scope.admits_new_task(labels):
                raise TaskDenied("this key is scoped to tasks it did not create: a new task must carry one of"
                                 " its labels (metadata \"labels\")")
            return
        if rule.target is Target.EVENT_FILTER:
            task_ids = list(request.task_ids)
            if not task_ids:
                raise _denied("")
            for task_id in task_ids:
                if not await self.holds(scope, task_id):
                    raise _denied(task_id)
            return
        named = _field(request, rule.field)
        if rule.target is Target.TASK:
            if getattr(request, "thread_id", ""):
                raise TaskDenied("this key is scoped to its own tasks: name the task (task_id), not a thread")
            task_id = named
        elif rule.target is Target.ACTION:
            task_id = await self._storage.read(access_store.task_of_action, scope.namespace, named) or ""
        else:
            task_id = await self._storage.read(access_store.task_of_wait, scope.namespace, named) or ""
        if not await self.holds(scope, task_id):
            if rule.target is Target.TASK:
                raise _denied(named)
            # The same words for another task's action (or wait) and a missing one.
            raise TaskDenied(f"this key is scoped to its own tasks; it may not use {rule.target.value} {named!r}")


def _metadata(request: Any) -> dict[str, Any]:
    if not request.HasField("metadata"):
        return {}
    converted = json_format.MessageToDict(request.metadata)
    return converted if isinstance(converted, dict) else {}
