"""The one in-memory cache every process keeps its remembered values in: least recently used
out first, bounded in bytes (not in entries: a caller's text decides how large an entry is),
with an optional lifetime. Thread-safe; the values are shared, so keep immutable ones or copy.

`approx_size` measures what a value holds (strings, bytes, arrays, containers, dataclasses and
plain objects, each counted once), linear in the value: a cache pays it once per store.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

_MISSING = object()
# Scalars' sizes are fixed; measuring them one by one would cost more than it tells.
_SCALARS = (int, float, bool, complex, type(None))


def approx_size(value: Any) -> int:
    """Bytes `value` keeps alive, as sys.getsizeof counts them, each object once."""
    seen: set[int] = set()
    total, stack = 0, [value]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, _SCALARS):
            total += 32
            continue
        nbytes = getattr(item, "nbytes", None)  # numpy arrays: their buffer (a view's too)
        total += max(sys.getsizeof(item, 64), nbytes if isinstance(nbytes, int) else 0)
        if isinstance(item, str | bytes | bytearray | memoryview) or nbytes is not None:
            continue
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend(item)
        if hasattr(item, "__dict__") and not isinstance(item, type):
            stack.append(vars(item))
        for slot in getattr(type(item), "__slots__", ()):
            stack.append(getattr(item, slot, None))
    return total


class BoundedCache[V]:
    """key → value, least recently used out first while the values' sizes pass `max_bytes`.

    `max_bytes` and `seconds` may be callables (read at each store, so a setting changed by a
    test or an operator applies at once); `seconds` None or <= 0 keeps values until evicted. A
    value over a quarter of the budget is not kept: one answer must not empty the cache."""

    def __init__(
        self,
        max_bytes: int | Callable[[], int],
        *,
        seconds: float | Callable[[], float] | None = None,
        sizeof: Callable[[Any], int] = approx_size,
    ) -> None:
        self._max_bytes, self._seconds, self._sizeof = max_bytes, seconds, sizeof
        self._items: OrderedDict[Hashable, tuple[float, int, V]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @staticmethod
    def _read(value) -> float:
        return float(value() if callable(value) else value or 0)

    def get(self, key: Hashable, default: Any = None) -> V | Any:
        with self._lock:
            item = self._items.get(key, _MISSING)
            if item is _MISSING:
                return default
            until, _, value = item  # type: ignore[misc]
            if until and until < time.monotonic():
                self._drop(key)
                return default
            self._items.move_to_end(key)
            return value

    def put(self, key: Hashable, value: V, *, size: int | None = None) -> bool:
        """Keep `value` (its size measured unless given); False when it is not kept."""
        budget = int(self._read(self._max_bytes))
        size = self._sizeof(value) if size is None else size
        if budget <= 0 or size > budget // 4:
            return False
        seconds = self._read(self._seconds) if self._seconds is not None else 0
        until = time.monotonic() + seconds if seconds > 0 else 0.0
        with self._lock:
            if key in self._items:
                self._drop(key)
            self._items[key] = (until, size, value)
            self._bytes += size
            while self._bytes > budget and self._items:
                self._drop(next(iter(self._items)))
        return True

    def pop(self, key: Hashable) -> None:
        with self._lock:
            if key in self._items:
                self._drop(key)

    def _drop(self, key: Hashable) -> None:
        _, size, _ = self._items.pop(key)
        self._bytes -= size

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0

    def __len__(self) -> int:
        return len(self._items)

    @property
    def bytes(self) -> int:
        """What the kept values measure, in all (never over the budget after a store)."""
        return self._bytes
