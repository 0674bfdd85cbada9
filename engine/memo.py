"""Converted forms of a duel's append-only lists, extended by the new items only.

A duel's move list (``lines``) and move log (``log``) only ever grow, their items are
immutable, and the copies of a duel made for each move share those items. So the identity of
a list's last item fixes the whole list before it, and whatever was computed from the list at
the previous version can be reused: convert only the items appended since. This turns the
per-version cost of rendering three views and one stored snapshot from proportional to the
game's length into proportional to what the move added (see docs/PERFORMANCE.md).

Each :class:`~engine.duel.Duel` holds one (``duel.memo``), shared by its copies, so the cache
lives and dies with the game. Pure and deterministic: a cache of values that are recomputed
identically on a miss.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class PrefixMemo(Generic[T, R]):
    """``convert`` applied to every item of an append-only list, memoised by the last item.

    ``variant`` separates conversions that depend on more than the item (a viewer, say).
    Each entry keeps its last item alive, so an ``id`` cannot be reused while it is cached.
    Extending an entry drops the one it extended (only the latest version of a game is
    usually asked for again), and the memo is cleared whole when it reaches ``limit``
    entries; a miss only costs the full conversion.
    """

    __slots__ = ("_entries", "_limit")

    def __init__(self, limit: int = 64) -> None:
        self._entries: dict[tuple[int, Hashable], tuple[T, tuple[R, ...]]] = {}
        self._limit = limit

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, items: Sequence[T], variant: Hashable, convert: Callable[[T], R]) -> tuple[R, ...]:
        if not items:
            return ()
        entries = self._entries
        last = items[-1]
        key = (id(last), variant)
        hit = entries.get(key)
        if hit is not None and hit[0] is last:
            return hit[1]
        if len(items) > 1:
            # the usual miss: the list of the version before, one item shorter, is known.
            # (The general loop below finds it too; this skips its range, generator, seed
            # call and second key: ~30k -> ~10k instructions a call, bench/path.py.)
            prev = items[-2]
            prev_key = (id(prev), variant)
            found = entries.get(prev_key)
            if found is not None and found[0] is prev:
                del entries[prev_key]
                converted = found[1] + (convert(last),)
                if len(entries) >= self._limit:
                    entries.clear()
                entries[key] = (last, converted)
                return converted
        base: tuple[R, ...] = ()
        start = 0
        for i in range(len(items) - 2, -1, -1):  # the longest converted prefix, usually one step back
            prev_key = (id(items[i]), variant)
            prev = entries.get(prev_key)
            if prev is not None and prev[0] is items[i]:
                base, start = prev[1], i + 1
                del entries[prev_key]
                break
        converted = base + tuple(convert(item) for item in items[start:])
        self.seed(items, variant, converted)
        return converted

    def seed(self, items: Sequence[T], variant: Hashable, converted: tuple[R, ...]) -> None:
        """Record ``converted`` as ``items``' converted form, known without converting (decoded
        from it, say): it must equal what :meth:`get` would compute."""
        if not items:
            return
        if len(self._entries) >= self._limit:
            self._entries.clear()
        self._entries[(id(items[-1]), variant)] = (items[-1], converted)
