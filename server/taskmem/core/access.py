"""Who may call what: key roles, task scopes, and the one table that classifies every RPC.

A key has a role. `reader` may call every read; `writer` also every write of tasks, memory, state and
waits; `admin` also the webhook signing secret and its rotation (and it is the role of a key configured
the old way, with no role: such keys could do everything before roles existed, and still can). Key
administration and retention are the server's configuration (the keys file, the retention setting), so
no RPC needs more than admin.

A key may also be scoped to tasks: those it created, those it is given by id, and those carrying one of
its labels (a task carries a label when its metadata's "labels" list holds it). A scoped key reads and
writes only those tasks; a call naming any other task — in its namespace or not, existing or not — is
refused with the same PERMISSION_DENIED, so the refusal tells nothing about what exists. Calls that are
not about one task (knowledge, patterns, memory search, working memory, webhook secrets) are refused to
a scoped key; list calls list only its tasks.

RPC_RULES is the table: the role each RPC needs, and how a scoped key's call names its task. A test
enumerates the services' descriptors and fails on any RPC missing here.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable, Mapping
from typing import Any


class Role(enum.IntEnum):
    """Ordered: each role may do everything the ones below it may."""

    READER = 1
    WRITER = 2
    ADMIN = 3

    @property
    def label(self) -> str:
        return self.name.lower()


ROLES_BY_NAME = {role.label: role for role in Role}


class Target(enum.Enum):
    """How a call names the task a scoped key must hold."""

    TASK = "task"  # a task id field (required of a scoped key even where it is optional for others)
    ACTION = "action"  # an action id field: the action's task
    WAIT = "wait"  # a wait id field: the wait's task
    NEW_TASK = "new task"  # CreateTask: allowed when the key's scope will hold the new task
    TASK_LIST = "task list"  # ListTasks: answered with the scope's tasks only
    EVENT_FILTER = "event filter"  # ListEvents, SubscribeEvents: every task_ids entry in scope, and at least one
    NAMESPACE = "namespace"  # not about one task: refused to a scoped key


@dataclasses.dataclass(frozen=True)
class Rule:
    role: Role
    target: Target
    field: str = ""  # the request field (a dotted path) naming the task, action or wait


def _read(target: Target = Target.TASK, field: str = "task_id") -> Rule:
    return Rule(Role.READER, target, field if target in (Target.TASK, Target.ACTION, Target.WAIT) else "")


def _write(target: Target = Target.TASK, field: str = "task_id") -> Rule:
    return Rule(Role.WRITER, target, field if target in (Target.TASK, Target.ACTION, Target.WAIT) else "")


_NS = Target.NAMESPACE

# Every RPC of the four services, "Service/Method" → its rule. Reads first, then writes, per service.
RPC_RULES: Mapping[str, Rule] = {
    # TaskService
    "TaskService/GetTask": _read(),
    "TaskService/ListTasks": _read(Target.TASK_LIST),
    "TaskService/GetPlan": _read(),
    "TaskService/ListActions": _read(),
    "TaskService/TailActionLog": _read(Target.ACTION, "action_id"),
    "TaskService/ListMessages": _read(),
    "TaskService/ListContextSnapshots": _read(),
    "TaskService/SubscribeEvents": _read(Target.EVENT_FILTER),
    "TaskService/ListEvents": _read(Target.EVENT_FILTER),
    "TaskService/GetProgress": _read(),
    "TaskService/ListWebhookDeliveries": _read(),
    "TaskService/GetTaskUsage": _read(),
    "TaskService/CreateTask": _write(Target.NEW_TASK),
    "TaskService/UpdateTask": _write(Target.TASK, "task.id"),
    "TaskService/ReplacePlan": _write(),
    "TaskService/UpdatePlanItem": _write(),
    "TaskService/ClaimPlanItem": _write(),
    "TaskService/RenewClaim": _write(),
    "TaskService/ReleaseClaim": _write(),
    "TaskService/RecordAction": _write(),
    "TaskService/CompleteAction": _write(Target.ACTION, "action_id"),
    "TaskService/AppendActionLog": _write(Target.ACTION, "action_id"),
    "TaskService/PostMessage": _write(),
    "TaskService/RecordContextSnapshot": _write(),
    "TaskService/ForkTask": _write(),
    "TaskService/GetWebhookSecret": Rule(Role.ADMIN, _NS),
    "TaskService/RotateWebhookSecret": Rule(Role.ADMIN, _NS),
    # MemoryService
    "MemoryService/QueryMemoryEntries": _read(_NS),
    "MemoryService/GetRelevantMemories": _read(),
    "MemoryService/SearchMemories": _read(_NS),
    "MemoryService/GetKnowledge": _read(_NS),
    "MemoryService/QueryKnowledge": _read(_NS),
    "MemoryService/ListEpisodes": _read(),
    "MemoryService/ListArtifacts": _read(),
    "MemoryService/ListPatterns": _read(_NS),
    "MemoryService/AddMemoryEntries": _write(_NS),
    "MemoryService/ExtractMemories": _write(),
    "MemoryService/UpsertKnowledge": _write(_NS),
    "MemoryService/DeleteKnowledge": _write(_NS),
    "MemoryService/RecordEpisode": _write(),
    "MemoryService/RegisterArtifact": _write(),
    "MemoryService/DeleteArtifact": _write(_NS),
    "MemoryService/RecordPattern": _write(_NS),
    # StateService
    "StateService/GetTaskState": _read(),
    "StateService/ListStateItems": _read(),
    "StateService/RenderState": _read(),
    "StateService/ExpandStateItem": _read(),
    "StateService/GetWorkingMemory": _read(_NS),
    "StateService/BuildContext": _read(),
    "StateService/QueryTask": _read(),
    "StateService/GetTaskStateHistory": _read(),
    "StateService/DiffTaskState": _read(),
    "StateService/AddDecision": _write(),
    "StateService/AddError": _write(),
    "StateService/ExtractState": _write(),
    "StateService/UpsertStateItems": _write(),
    "StateService/PinStateItem": _write(),
    "StateService/SetStateItemStatus": _write(),
    "StateService/PutWorkingMemory": _write(_NS),
    # WaitService
    "WaitService/GetWait": _read(Target.WAIT, "wait_id"),
    "WaitService/ListWaits": _read(),
    "WaitService/WatchWait": _read(Target.WAIT, "wait_id"),
    "WaitService/CreateWait": _write(),
    "WaitService/CancelWait": _write(Target.WAIT, "wait_id"),
    "WaitService/ResolveWait": _write(Target.WAIT, "wait_id"),
}


# What an RPC missing from the table gets: the admin role, and no scoped key.
UNCLASSIFIED = Rule(Role.ADMIN, Target.NAMESPACE)


def rule_of(method_path: str) -> Rule | None:
    """The rule of "/taskmem.v1.TaskService/GetTask"; None for a method not in the table."""
    service, _, method = method_path.rpartition("/")
    return RPC_RULES.get(f"{service.rpartition('.')[2]}/{method}")


@dataclasses.dataclass(frozen=True)
class TaskScope:
    """The tasks a scoped key may touch. A key with no TaskScope may touch every task of its namespaces."""

    created: bool = False  # the tasks it created
    task_ids: frozenset[str] = frozenset()  # the tasks it is given
    labels: frozenset[str] = frozenset()  # the tasks carrying one of these labels

    def holds(self, task_id: str, creator_key_id: str, task_labels: Iterable[str], key_id: str) -> bool:
        """Whether a task (its id, the id of the key that created it, its labels) is in scope."""
        return (task_id in self.task_ids or (self.created and bool(key_id) and creator_key_id == key_id)
                or not self.labels.isdisjoint(task_labels))

    def admits_new_task(self, new_labels: Iterable[str]) -> bool:
        """Whether a task this key creates (with these labels) will be in its scope."""
        return self.created or not self.labels.isdisjoint(new_labels)


def task_labels(metadata: Mapping[str, Any]) -> frozenset[str]:
    """A task's labels: the strings of its metadata's "labels" list."""
    labels = metadata.get("labels")
    if not isinstance(labels, list):
        return frozenset()
    return frozenset(label for label in labels if isinstance(label, str))


@dataclasses.dataclass(frozen=True)
class KeyEntry:
    """One API key: its public id (what events record), its secret (never recorded), role, namespaces
    (the first is its default) and task scope (None: every task of those namespaces)."""

    id: str
    secret: str
    role: Role
    namespaces: tuple[str, ...]
    scope: TaskScope | None = None
