"""KeyedLocks (state/thread_locks.py): exclusion per key, independence across keys, and a map that holds
only keys in use, cancelled waiters included."""

from __future__ import annotations

import asyncio

import pytest

from taskmem.state.thread_locks import KeyedLocks


async def settle() -> None:
    """Let every ready task run until it blocks."""
    for _ in range(5):
        await asyncio.sleep(0)


class Occupancy:
    """Counts who is inside a key's critical section, and the most at once."""

    def __init__(self) -> None:
        self.inside = 0
        self.most = 0
        self.order: list[int] = []

    async def visit(self, locks: KeyedLocks[str], key: str, n: int) -> None:
        async with locks.hold(key):
            self.inside += 1
            self.most = max(self.most, self.inside)
            self.order.append(n)
            await asyncio.sleep(0)  # yield inside: a broken lock would let others in now
            await asyncio.sleep(0)
            self.inside -= 1


async def test_one_holder_at_a_time_per_key_in_arrival_order() -> None:
    locks: KeyedLocks[str] = KeyedLocks()
    seen = Occupancy()
    await asyncio.gather(*(seen.visit(locks, "thread", n) for n in range(50)))
    assert seen.most == 1
    assert seen.order == list(range(50))


async def test_different_keys_do_not_wait_for_each_other() -> None:
    locks: KeyedLocks[str] = KeyedLocks()
    release = asyncio.Event()

    async def hold_a() -> None:
        async with locks.hold("a"):
            await release.wait()

    holder = asyncio.create_task(hold_a())
    await settle()
    async with asyncio.timeout(1):
        async with locks.hold("b"):
            assert len(locks) == 2
    release.set()
    await holder


async def test_the_map_is_empty_once_every_holder_has_left() -> None:
    locks: KeyedLocks[tuple[str, str]] = KeyedLocks()
    seen = Occupancy()

    async def visit(key: tuple[str, str], n: int) -> None:
        async with locks.hold(key):
            assert len(locks) >= 1
            seen.order.append(n)
            await asyncio.sleep(0)

    await asyncio.gather(*(visit(("default", f"thread-{n % 100}"), n) for n in range(1000)))
    assert len(seen.order) == 1000
    assert len(locks) == 0


async def test_a_body_that_raises_releases_and_leaves_no_entry() -> None:
    locks: KeyedLocks[str] = KeyedLocks()
    with pytest.raises(RuntimeError):
        async with locks.hold("thread"):
            raise RuntimeError("reconciliation failed")
    assert len(locks) == 0
    async with asyncio.timeout(1):
        async with locks.hold("thread"):
            pass


async def test_a_cancelled_waiter_leaves_no_entry_and_exclusion_holds() -> None:
    locks: KeyedLocks[str] = KeyedLocks()
    release = asyncio.Event()
    seen = Occupancy()

    async def hold_until_released() -> None:
        async with locks.hold("thread"):
            seen.inside += 1
            seen.most = max(seen.most, seen.inside)
            await release.wait()
            seen.inside -= 1

    holder = asyncio.create_task(hold_until_released())
    await settle()
    cancelled = asyncio.create_task(seen.visit(locks, "thread", 1))
    waiting = asyncio.create_task(seen.visit(locks, "thread", 2))
    await settle()
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    assert len(locks) == 1  # the holder and the other waiter still use it
    late = asyncio.create_task(seen.visit(locks, "thread", 3))  # arrives after the cancellation
    await settle()
    assert seen.order == []  # nobody got in beside the holder
    release.set()
    await asyncio.gather(holder, waiting, late)
    assert seen.most == 1
    assert seen.order == [2, 3]
    assert len(locks) == 0


async def test_a_waiter_cancelled_just_as_the_lock_passes_to_it_hands_it_on() -> None:
    """The holder leaves, which wakes the first waiter; that waiter is cancelled before it runs. The lock
    must go to the next waiter, not stay taken by nobody, and the map must empty."""
    locks: KeyedLocks[str] = KeyedLocks()
    seen = Occupancy()
    entered = asyncio.Event()
    release = asyncio.Event()
    waiters: list[asyncio.Task[None]] = []

    async def hold_then_cancel_the_woken_waiter() -> None:
        async with locks.hold("thread"):
            entered.set()
            await release.wait()
        waiters[0].cancel()  # no await since the release: the woken waiter has not run yet

    holder = asyncio.create_task(hold_then_cancel_the_woken_waiter())
    await entered.wait()
    waiters += [asyncio.create_task(seen.visit(locks, "thread", n)) for n in (1, 2)]
    await settle()
    release.set()
    await holder
    with pytest.raises(asyncio.CancelledError):
        await waiters[0]
    async with asyncio.timeout(1):
        await waiters[1]
    assert seen.order == [2] and seen.most == 1
    assert len(locks) == 0


async def test_cancelling_every_waiter_and_the_holder_leaves_the_map_empty() -> None:
    locks: KeyedLocks[str] = KeyedLocks()
    release = asyncio.Event()

    async def hold_forever(key: str) -> None:
        async with locks.hold(key):
            await release.wait()

    everyone = [asyncio.create_task(hold_forever(f"thread-{n % 3}")) for n in range(30)]
    await settle()
    assert len(locks) == 3
    for task in everyone:
        task.cancel()
    await asyncio.gather(*everyone, return_exceptions=True)
    assert all(task.cancelled() for task in everyone)
    assert len(locks) == 0
