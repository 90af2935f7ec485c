"""Store items between proto and core (core/store_items.py)."""

from __future__ import annotations

from typing import Any

from google.protobuf import duration_pb2

from taskmem.api import validate
from taskmem.api.task_convert import timestamp
from taskmem.core import store_items as core
from taskmem.core.errors import InvalidArgument
from taskmem.core.store_items import MatchType, StoreItem, StoreWrite
from taskmem.v1 import memory_pb2, memory_service_pb2 as pb

WRITES_MAX, KEY_MAX, VALUE_MAX, INDEX_MAX, QUERY_MAX, PAGE_MAX, MATCHES_MAX = 100, 256, 1 << 20, 65_536, 1_000, 1_000, 10
_MATCH_TYPES = {memory_pb2.STORE_NAMESPACE_MATCH_TYPE_PREFIX: MatchType.PREFIX,
                memory_pb2.STORE_NAMESPACE_MATCH_TYPE_SUFFIX: MatchType.SUFFIX}


def writes(request: pb.PutStoreItemsRequest) -> list[StoreWrite]:
    validate.count("writes", request.writes, WRITES_MAX, required=True)
    found = []
    for position, write in enumerate(request.writes):
        at = f"writes[{position}]"
        if write.value_json:
            if len(write.value_json.encode()) > VALUE_MAX:
                raise InvalidArgument(f"{at}.value_json", f"is larger than {VALUE_MAX} bytes")
            core.parse_object(f"{at}.value_json", write.value_json)
        ttl = validate.duration_us(f"{at}.ttl", write.ttl, write.HasField("ttl"))
        if ttl is not None and ttl <= 0:
            raise InvalidArgument(f"{at}.ttl", "must be positive")
        found.append(StoreWrite(core.check_path(f"{at}.path", write.path), key(f"{at}.key", write.key),
                                write.value_json, ttl, validate.text(f"{at}.index_text", write.index_text, INDEX_MAX)))
    return found


def key(field: str, value: str) -> str:
    return validate.text(field, value, KEY_MAX, required=True)


def keys(request: pb.GetStoreItemsRequest) -> list[tuple[tuple[str, ...], str]]:
    validate.count("keys", request.keys, WRITES_MAX, required=True)
    return [(core.check_path(f"keys[{i}].path", k.path), key(f"keys[{i}].key", k.key))
            for i, k in enumerate(request.keys)]


def search_filter(text: str) -> dict[str, Any]:
    return core.check_filter("filter_json", core.parse_object("filter_json", text)) if text else {}


def page(field_limit: int, field_offset: int, default: int) -> tuple[int, int]:
    if not 0 <= field_limit <= PAGE_MAX:
        raise InvalidArgument("limit", f"must be 0..{PAGE_MAX}")
    if field_offset < 0:
        raise InvalidArgument("offset", "must not be negative")
    return field_limit or default, field_offset


def matches(request: pb.ListStoreNamespacesRequest) -> list[tuple[MatchType, tuple[str, ...]]]:
    validate.count("matches", request.matches, MATCHES_MAX)
    found = []
    for position, match in enumerate(request.matches):
        match_type = _MATCH_TYPES.get(match.match_type)
        if match_type is None:
            raise InvalidArgument(f"matches[{position}].match_type", "is required: PREFIX or SUFFIX")
        found.append((match_type, core.check_path(f"matches[{position}].labels", match.labels, wildcard=True)))
    return found


def item(i: StoreItem) -> memory_pb2.StoreItem:
    message = memory_pb2.StoreItem(path=list(i.path), key=i.key, value_json=i.value_json,
                                   create_time=timestamp(i.created_at), update_time=timestamp(i.updated_at),
                                   expire_time=timestamp(i.expires_at), memory_entry_id=i.memory_entry_id)
    if i.ttl_us:
        message.ttl.CopyFrom(duration_pb2.Duration(seconds=i.ttl_us // 1_000_000, nanos=i.ttl_us % 1_000_000 * 1000))
    return message


def hit(found: StoreItem, score: float | None) -> memory_pb2.StoreItemHit:
    message = memory_pb2.StoreItemHit(item=item(found))
    if score is not None:
        message.score = score
    return message
