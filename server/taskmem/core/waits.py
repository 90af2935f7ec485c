"""Waits: targets, their outcomes, the history message and the task metadata keys of an outcome.

Pure: the scheduler (store side) does the watching and the I/O; this module decides
what an observation means and what gets written.
"""

from __future__ import annotations

import dataclasses
import enum
import posixpath
from typing import Any, Union

from taskmem.core.errors import FailedPrecondition, InvalidArgument
from taskmem.core.events import Event, EventType
from taskmem.core.tasks import TaskStatus, reachable_moves


class WaitStatus(enum.StrEnum):
    WAITING = "WAIT_STATUS_WAITING"
    RESOLVED = "WAIT_STATUS_RESOLVED"
    TIMED_OUT = "WAIT_STATUS_TIMED_OUT"
    CANCELLED = "WAIT_STATUS_CANCELLED"
    FAILED = "WAIT_STATUS_FAILED"


ENDED = frozenset({WaitStatus.RESOLVED, WaitStatus.TIMED_OUT, WaitStatus.CANCELLED, WaitStatus.FAILED})

# The event each final status emits, and the word the task metadata key last_wait_state stores for it
# (docs/api.md, "WaitService": the paragraph after its table).
END_EVENTS = {
    WaitStatus.RESOLVED: EventType.WAIT_RESOLVED, WaitStatus.TIMED_OUT: EventType.WAIT_TIMED_OUT,
    WaitStatus.CANCELLED: EventType.WAIT_CANCELLED, WaitStatus.FAILED: EventType.WAIT_FAILED,
}
WAIT_EVENTS = frozenset({EventType.WAIT_CREATED, *END_EVENTS.values()})
_STATE_WORDS = {WaitStatus.WAITING: "watching", WaitStatus.RESOLVED: "resolved", WaitStatus.TIMED_OUT: "timeout",
                WaitStatus.CANCELLED: "cancelled", WaitStatus.FAILED: "error"}
_HEADINGS = {WaitStatus.RESOLVED: "[Wait resolved]", WaitStatus.TIMED_OUT: "[Wait timed out]",
             WaitStatus.CANCELLED: "[Wait cancelled]", WaitStatus.FAILED: "[Wait failed]"}


@dataclasses.dataclass
class TimerTarget:
    duration_us: int


@dataclasses.dataclass
class TaskStatusTarget:
    task_id: str
    statuses: list[TaskStatus]


@dataclasses.dataclass
class EventTarget:
    task_id: str
    type: EventType
    payload_field: str = ""
    payload_value: Any = None


@dataclasses.dataclass
class HttpTarget:
    url: str
    expect_status: int = 200
    body_contains: str = ""


@dataclasses.dataclass
class FileTarget:
    path: str  # as the caller gave it
    contains: str = ""
    resolved: str = ""  # the absolute path under the workspace, fixed at creation
    workspace: str = ""


class ExternalKind(enum.StrEnum):
    """Whether an external wait waits on a person (core/person_waits), and for what."""

    UNSPECIFIED = "EXTERNAL_WAIT_KIND_UNSPECIFIED"
    INPUT = "EXTERNAL_WAIT_KIND_INPUT"
    AUTH = "EXTERNAL_WAIT_KIND_AUTH"


@dataclasses.dataclass
class ExternalTarget:
    resolver: str = ""
    kind: ExternalKind = ExternalKind.UNSPECIFIED
    question: str = ""
    plan_item_id: str = ""
    # A wait on a person: the status (TaskStatus or ItemStatus value) its task or item returns to when the
    # last wait on a person about it ends. Fixed at creation; never on the wire.
    resume_status: str = ""

    @property
    def on_person(self) -> bool:
        return self.kind is not ExternalKind.UNSPECIFIED


Target = Union[TimerTarget, TaskStatusTarget, EventTarget, HttpTarget, FileTarget, ExternalTarget]

# The oneof field name of each kind, as the wire and the database name it.
KIND_NAMES: dict[type, str] = {TimerTarget: "timer", TaskStatusTarget: "task_status", EventTarget: "event",
                               HttpTarget: "http", FileTarget: "file", ExternalTarget: "external"}
_KINDS_BY_NAME = {name: kind for kind, name in KIND_NAMES.items()}
POLLED = (HttpTarget, FileTarget)
EVENT_DRIVEN = (TaskStatusTarget, EventTarget)


@dataclasses.dataclass
class Wait:
    namespace: str
    id: str
    criteria: str
    target: Target
    created_at: int
    correlation_id: str
    task_id: str = ""
    status: WaitStatus = WaitStatus.WAITING
    result: str = ""
    timeout_us: int | None = None
    poll_interval_us: int | None = None
    start_cursor: int = 0  # event targets match only events after this cursor
    ended_at: int | None = None
    forced: bool = False

    @property
    def kind(self) -> str:
        return KIND_NAMES[type(self.target)]

    @property
    def deadline_at(self) -> int | None:
        return None if self.timeout_us is None else self.created_at + self.timeout_us

    @property
    def due_at(self) -> int | None:
        """When a timer fires; None for other kinds."""
        return self.created_at + self.target.duration_us if isinstance(self.target, TimerTarget) else None

    @property
    def expires_at(self) -> int | None:
        """The first moment the wait ends by time alone (timer due or deadline), if any."""
        times = [t for t in (self.due_at, self.deadline_at) if t is not None]
        return min(times) if times else None


# --- targets ⇄ stored JSON ---------------------------------------------------------------------

def target_to_json(target: Target) -> dict[str, Any]:
    values = dataclasses.asdict(target)
    if isinstance(target, TaskStatusTarget):
        values["statuses"] = [s.value for s in target.statuses]
    if isinstance(target, EventTarget):
        values["type"] = target.type.value
    return values


def target_from_json(kind: str, values: dict[str, Any]) -> Target:
    cls = _KINDS_BY_NAME[kind]
    if cls is TaskStatusTarget:
        return TaskStatusTarget(values["task_id"], [TaskStatus(s) for s in values["statuses"]])
    if cls is EventTarget:
        return EventTarget(values["task_id"], EventType(values["type"]), values.get("payload_field", ""),
                           values.get("payload_value"))
    if cls is ExternalTarget:
        return ExternalTarget(**{**values, "kind": ExternalKind(values.get("kind") or ExternalKind.UNSPECIFIED)})
    target: Target = cls(**values)
    return target


# --- describing -------------------------------------------------------------------------------

def format_duration(us: int) -> str:
    """A short human form: "45s", "2m 5s", "3h 10m", "2d 4h"."""
    seconds = us / 1_000_000
    if seconds < 60:
        return f"{round(seconds, 3 if seconds < 1 else 1):g}s"
    total = int(seconds)
    days, rest = divmod(total, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, secs = divmod(rest, 60)
    parts = [(days, "d"), (hours, "h"), (minutes, "m"), (secs, "s")]
    shown = [f"{n}{unit}" for n, unit in parts if n][:2]
    return " ".join(shown)


def describe_target(target: Target) -> str:
    """The default criteria of a wait whose caller gave none."""
    if isinstance(target, TimerTarget):
        return f"timer {format_duration(target.duration_us)}"
    if isinstance(target, TaskStatusTarget):
        return f"task {target.task_id} reaches {' or '.join(s.name for s in target.statuses)}"
    if isinstance(target, EventTarget):
        match = f" with {target.payload_field} = {target.payload_value!r}" if target.payload_field else ""
        return f"event {target.type.name} on task {target.task_id}{match}"
    if isinstance(target, HttpTarget):
        body = f" containing {target.body_contains!r}" if target.body_contains else ""
        return f"GET {target.url} returns {target.expect_status}{body}"
    if isinstance(target, FileTarget):
        return f"{target.path} contains {target.contains!r}" if target.contains else f"{target.path} exists"
    if target.on_person:
        need = "input" if target.kind is ExternalKind.INPUT else "authorisation"
        return f"{need} from {target.resolver or 'a person'}: {target.question}"
    return f"resolved by {target.resolver}" if target.resolver else "resolved externally"


# --- checks of what is observed ---------------------------------------------------------------

def _reachable(start: TaskStatus) -> set[TaskStatus]:
    seen = {start}
    frontier = [start]
    while frontier:
        for status in reachable_moves(frontier.pop()):
            if status not in seen:
                seen.add(status)
                frontier.append(status)
    return seen


def task_status_outcome(target: TaskStatusTarget, status: TaskStatus) -> tuple[WaitStatus, str] | None:
    """RESOLVED when the task is in a wanted status, FAILED when none is reachable any more, else None."""
    if status in target.statuses:
        return WaitStatus.RESOLVED, f"task {target.task_id} reached {status.name}"
    if not _reachable(status) & set(target.statuses):
        wanted = " or ".join(s.name for s in target.statuses)
        return WaitStatus.FAILED, f"task {target.task_id} reached {status.name} and can no longer reach {wanted}"
    return None


def _lookup(payload: Any, dotted: str) -> tuple[bool, Any]:
    for part in dotted.split("."):
        if not isinstance(payload, dict) or part not in payload:
            return False, None
        payload = payload[part]
    return True, payload


def _same_json(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) \
            and not isinstance(b, bool):
        return float(a) == float(b)
    return bool(a == b)


def _written_by_creation(wait: Wait, event: Event) -> bool:
    """Events of the wait's own creation (its "[Wait started]" message, its metadata) share its time and id."""
    return event.created_at == wait.created_at and event.correlation_id == wait.correlation_id


def event_matches(wait: Wait, event: Event) -> bool:
    """An event target is met by a matching event committed after the wait was created."""
    target = wait.target
    assert isinstance(target, EventTarget)
    if event.cursor <= wait.start_cursor or _written_by_creation(wait, event):
        return False
    if event.task_id != target.task_id or event.type is not target.type:
        return False
    if not target.payload_field:
        return True
    found, value = _lookup(event.payload, target.payload_field)
    return found and _same_json(value, target.payload_value)


def event_result(event: Event) -> str:
    return f"event {event.type.name} (cursor {event.cursor}) on task {event.task_id}"


def http_matches(target: HttpTarget, status_code: int, body: bytes) -> bool:
    return status_code == target.expect_status and (
        not target.body_contains or target.body_contains.encode() in body)


def resolve_in_workspace(field: str, workspace: str, path: str) -> str:
    """The absolute, normalised path of `path` under `workspace`; INVALID_ARGUMENT if it leaves it.

    Lexical only (no file system access); the scheduler checks symlinks when it looks.
    """
    if not workspace:
        raise InvalidArgument(field, "a file target needs task_id naming a task that has a workspace")
    if not posixpath.isabs(workspace):
        raise InvalidArgument(field, f"the task's workspace {workspace!r} is not an absolute path")
    root = posixpath.normpath(workspace)
    resolved = posixpath.normpath(posixpath.join(root, path))
    if not is_inside(root, resolved):
        raise InvalidArgument(field, f"{path!r} is outside the task's workspace {root!r}")
    return resolved


def check_below_roots(field: str, path: str, roots: tuple[str, ...], namespace: str) -> None:
    """INVALID_ARGUMENT unless `path` lies below one of `roots`, the namespace's (lexically; the look itself
    opens it safely)."""
    if not any(is_inside(root, path) for root in roots):
        raise InvalidArgument(field, f"{path!r} is not below a wait_file_roots folder of namespace {namespace!r}"
                                     f" ({', '.join(roots) or 'none'})")


def is_inside(root: str, path: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


# --- outcomes ---------------------------------------------------------------------------------

def end_wait(wait: Wait, status: WaitStatus, result: str, now: int, *, forced: bool = False) -> None:
    """Move a WAITING wait to a final status; FAILED_PRECONDITION if it has already ended."""
    if wait.status is not WaitStatus.WAITING:
        raise FailedPrecondition(f"wait {wait.id} has already ended ({wait.status.name}: {wait.result})",
                                 field="wait_id", status=wait.status.value)
    if status not in ENDED:
        raise InvalidArgument("status", f"{status.name} is not a final status")
    wait.status, wait.result, wait.ended_at, wait.forced = status, result, now, forced


def timeout_result(wait: Wait, last_observation: str = "") -> str:
    assert wait.timeout_us is not None
    seen = f"; last check: {last_observation}" if last_observation else ""
    return f"no outcome within {format_duration(wait.timeout_us)}{seen}"


def expired_while_down_result(wait: Wait, expired_at: int, started_at: int) -> str:
    late = format_duration(max(0, started_at - expired_at))
    what = "timer was due" if expired_at == wait.due_at else "deadline passed"
    return f"{what} while the server was down ({late} before it started again)"


def started_message(wait: Wait) -> str:
    deadline = f" (times out after {format_duration(wait.timeout_us)})" if wait.timeout_us is not None else ""
    return f"[Wait started] {wait.criteria}{deadline}"


def outcome_message(wait: Wait) -> str:
    """The system message the linked task's thread gets: "[Wait resolved] <criteria> → <result>"."""
    return f"{_HEADINGS[wait.status]} {wait.criteria} → {wait.result or wait.status.name.lower()}"


def metadata_after(metadata: dict[str, Any], wait: Wait, now: int) -> dict[str, Any]:
    """The task metadata with the wait keys the server keeps (active_wait_ids, last_wait_*) updated for the
    wait's current status."""
    updated = dict(metadata)
    active = [i for i in updated.get("active_wait_ids") or [] if isinstance(i, str) and i != wait.id]
    if wait.status is WaitStatus.WAITING:
        active.append(wait.id)
    updated["active_wait_ids"] = active
    updated["last_wait_state"] = _STATE_WORDS[wait.status]
    updated["last_wait_event_at"] = now / 1_000_000
    return updated
