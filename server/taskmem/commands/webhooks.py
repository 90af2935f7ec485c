"""`taskmem webhooks list|secret|rotate-secret`: where each task's webhook deliveries stand, and the signing
secret."""

from __future__ import annotations

from typing import TextIO

from taskmem.commands.connection import TaskClient
from taskmem.commands.formatting import display_time, is_set, one_line, parse_short_enum, render_table, short_enum_name
from taskmem.v1 import event_pb2, task_service_pb2 as pb, webhook_pb2

ERROR_WIDTH = 60
PAGE = 500


def parse_delivery_state(text: str) -> webhook_pb2.WebhookDeliveryState.ValueType:
    """"pending", "delivered", "dead_lettered" (or the full enum name) → the enum value."""
    return parse_short_enum(webhook_pb2.WebhookDeliveryState, "WEBHOOK_DELIVERY_STATE_", text, "state")


async def list_deliveries(client: TaskClient, out: TextIO, *, task_id: str,
                          states: list[webhook_pb2.WebhookDeliveryState.ValueType], limit: int | None) -> None:
    """A table in cursor order: cursor, task, event type, state, attempts, last status or error, next attempt."""
    rows: list[list[str]] = []
    token = ""
    while limit is None or len(rows) < limit:
        size = PAGE if limit is None else min(PAGE, limit - len(rows))
        page = await client.stub.ListWebhookDeliveries(pb.ListWebhookDeliveriesRequest(
            task_id=task_id, states=states, page_size=size, page_token=token), **client.unary)
        rows.extend([str(d.cursor), d.task_id, short_enum_name(event_pb2.EventType, d.event_type, "EVENT_TYPE_"),
                     short_enum_name(webhook_pb2.WebhookDeliveryState, d.state, "WEBHOOK_DELIVERY_STATE_"),
                     str(d.attempts), one_line(d.last_error or (str(d.last_status_code) if d.last_status_code else "-"),
                                               ERROR_WIDTH),
                     display_time(d.next_attempt_time)] for d in page.deliveries)
        token = page.next_page_token
        if not token:
            break
    if not rows:
        print("No webhook deliveries.", file=out)
        return
    for line in render_table(["CURSOR", "TASK", "EVENT", "STATE", "ATTEMPTS", "LAST", "NEXT ATTEMPT"], rows):
        print(line, file=out)


async def print_secret(client: TaskClient, out: TextIO) -> None:
    reply = await client.stub.GetWebhookSecret(pb.GetWebhookSecretRequest(), **client.unary)
    print(reply.secret, file=out)


async def rotate_secret(client: TaskClient, out: TextIO, notes: TextIO, *, overlap_seconds: float | None) -> None:
    """The new secret on out (as `secret` prints it); until when the old one still signs on notes."""
    request = pb.RotateWebhookSecretRequest()
    if overlap_seconds is not None:
        request.overlap.FromNanoseconds(round(overlap_seconds * 1e9))
    reply = await client.stub.RotateWebhookSecret(request, **client.unary)
    print(reply.secret, file=out)
    if is_set(reply.previous_secret_expire_time):
        print(f"the previous secret also signs until {display_time(reply.previous_secret_expire_time)}", file=notes)
    else:
        print("the previous secret no longer signs", file=notes)
