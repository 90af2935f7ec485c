"""A2A ListTasks over a set of tasks: the SDK's filters, order and page tokens."""

from __future__ import annotations

from collections.abc import Iterable

from a2a.types.a2a_pb2 import ListTasksRequest, ListTasksResponse, Task
from a2a.utils.constants import DEFAULT_LIST_TASKS_PAGE_SIZE
from a2a.utils.errors import InvalidParamsError
from a2a.utils.task import ListTasksCursor, decode_list_tasks_cursor, encode_list_tasks_cursor


def _sort_key(task: Task) -> tuple[bool, int, str]:
    """The SDK's order, newest status first: (has a timestamp, the timestamp, id), descending."""
    stamped = task.status.HasField("timestamp")
    return stamped, task.status.timestamp.ToNanoseconds() if stamped else 0, task.id


def matches(task: Task, params: ListTasksRequest) -> bool:
    if params.context_id and task.context_id != params.context_id:
        return False
    if params.status and task.status.state != params.status:
        return False
    if params.HasField("status_timestamp_after"):
        after = params.status_timestamp_after.ToNanoseconds()
        return task.status.HasField("timestamp") and task.status.timestamp.ToNanoseconds() >= after
    return True


def list_page(tasks: Iterable[Task], params: ListTasksRequest) -> ListTasksResponse:
    """One page of the tasks that match params, as the SDK's own stores page them (a token names the
    last task of the previous page by its position, so it survives that task changing)."""
    found = sorted((task for task in tasks if matches(task, params)), key=_sort_key, reverse=True)
    start = 0
    if params.page_token:
        cursor = decode_list_tasks_cursor(params.page_token)
        if cursor is None:
            raise InvalidParamsError(f"Invalid page token: {params.page_token}")
        after = cursor.sort_key()
        start = next((i for i, task in enumerate(found) if _sort_key(task) < after), len(found))
    size = params.page_size or DEFAULT_LIST_TASKS_PAGE_SIZE
    page = found[start:start + size]
    next_token = ""
    if start + size < len(found):
        stamped, stamp, task_id = _sort_key(page[-1])
        next_token = encode_list_tasks_cursor(ListTasksCursor(stamp if stamped else None, task_id))
    return ListTasksResponse(tasks=page, next_page_token=next_token, page_size=size, total_size=len(found))
