"""One List call's page (AIP-158), the same for every List RPC: check page_size, decode the page token
against the calling namespace and the request's filter, read one row more than the page, cut the page and
issue the token of the next one."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any, Generic, Protocol, TypeVar

from taskmem.api.scope import current_scope
from taskmem.core import paging

T = TypeVar("T")


class PagedRequest(Protocol):
    @property
    def page_size(self) -> int: ...

    @property
    def page_token(self) -> str: ...


@dataclasses.dataclass(frozen=True)
class SortKey(Generic[T]):
    """What a page token holds: a row's sort key (`of`), whose values have the types `kinds`."""

    kinds: tuple[type, ...]
    of: Callable[[T], list[Any]]


async def list_page(request: PagedRequest, filter_key: list[Any], key: SortKey[T],
                    read: Callable[[list[Any] | None, int], Awaitable[list[T]]]) -> tuple[list[T], str]:
    """The page and the next page's token ("" on the last). `read(after, limit)` returns up to `limit`
    rows after the sort key `after` (None: from the start) in the list's order.

    A token is bound to the namespace as well as the filter, so one namespace's token never pages
    through another's rows."""
    size = paging.page_size(request.page_size)
    bound = [current_scope().namespace, *filter_key]
    after = paging.decode_token(request.page_token, bound, key.kinds)
    rows = await read(after, size + 1)
    return paging.page_of(rows, size, key.of, bound)
