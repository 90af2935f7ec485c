"""Checkpoints between proto and core (core/checkpoints.py)."""

from __future__ import annotations

from taskmem.api import validate
from taskmem.api.task_convert import timestamp
from taskmem.core.checkpoints import Checkpoint, PendingWrite, Serialized, parse_metadata
from taskmem.v1 import checkpoint_pb2

ID_MAX, TYPE_MAX, WRITES_MAX = 256, 100, 1_000


def ident(field: str, value: str, *, required: bool = True) -> str:
    return validate.text(field, value, ID_MAX, required=required)


def serialized(field: str, message: checkpoint_pb2.SerializedValue) -> Serialized:
    return Serialized(validate.text(f"{field}.type", message.type, TYPE_MAX), bytes(message.data))


def new_checkpoint(message: checkpoint_pb2.Checkpoint) -> Checkpoint:
    """A checkpoint to put, validated (task_id and times are the server's)."""
    _, fields = parse_metadata("checkpoint.metadata_json", message.metadata_json)
    if not message.HasField("value"):
        validate.text("checkpoint.value", "", 1, required=True)
    return Checkpoint(
        ident("checkpoint.thread_id", message.thread_id), ident("checkpoint.checkpoint_ns", message.checkpoint_ns,
                                                                required=False),
        ident("checkpoint.checkpoint_id", message.checkpoint_id),
        ident("checkpoint.parent_checkpoint_id", message.parent_checkpoint_id, required=False), "",
        serialized("checkpoint.value", message.value), message.metadata_json or "{}", fields.step, fields.source,
        fields.run_id, 0)


def new_writes(field: str, messages: list[checkpoint_pb2.PendingWrite]) -> list[PendingWrite]:
    validate.count(field, messages, WRITES_MAX, required=True)
    return [PendingWrite(ident(f"{field}[{i}].graph_task_id", w.graph_task_id), w.idx,
                         ident(f"{field}[{i}].channel", w.channel), serialized(f"{field}[{i}].value", w.value),
                         validate.text(f"{field}[{i}].graph_task_path", w.graph_task_path, 4 * ID_MAX))
            for i, w in enumerate(messages)]


def checkpoint(c: Checkpoint, *, with_value: bool = True) -> checkpoint_pb2.Checkpoint:
    message = checkpoint_pb2.Checkpoint(
        thread_id=c.thread_id, checkpoint_ns=c.checkpoint_ns, checkpoint_id=c.checkpoint_id,
        parent_checkpoint_id=c.parent_checkpoint_id, task_id=c.task_id, metadata_json=c.metadata_json, step=c.step,
        source=c.source, run_id=c.run_id, create_time=timestamp(c.created_at), expire_time=timestamp(c.expires_at),
        pending_writes=[pending_write(w) for w in c.pending_writes])
    if with_value and c.value is not None:
        message.value.type, message.value.data = c.value.type, c.value.data
    return message


def pending_write(w: PendingWrite) -> checkpoint_pb2.PendingWrite:
    return checkpoint_pb2.PendingWrite(
        graph_task_id=w.graph_task_id, idx=w.idx, channel=w.channel,
        value=checkpoint_pb2.SerializedValue(type=w.value.type, data=w.value.data), graph_task_path=w.graph_task_path)
