"""The result cache (issue 28 item 4): Arrow answers of compiled SQL, kept in memory so a
dashboard asking the same query again is answered without touching the warehouse.

An entry is keyed by what decides the answer's text and place (the model fingerprint, the
connection identity, the SQL text) and stamped with the data version it was read at (file
metadata, a refresh key's value). A lookup whose version differs, or whose entry has outlived
its TTL, drops the entry and misses: a cached answer is never older than the data it claims
to describe. The cache is bounded twice, by entries and by Arrow bytes, least recently used
first out. Arrow tables are immutable, so one entry is safely shared by every caller.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from dosi.errors import ArgumentError, bounded

DEFAULT_MAX_ENTRIES = 512
DEFAULT_MAX_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class _Entry:
    version: Hashable
    table: pa.Table
    nbytes: int
    expires: float | None  # time.monotonic() deadline, None: no TTL


class ResultCache:
    """A thread-safe LRU of Arrow results bounded by entries and bytes.

    One instance may be shared by many `Engine`s (the REST, MCP and PostgreSQL-wire servers
    share one across their engine pool and keep it over model reloads, cleared on each)."""

    def __init__(
        self,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        ttl: float | None = None,
    ) -> None:
        self.max_entries = _positive_int(max_entries, "max_entries")
        self.max_bytes = _positive_int(max_bytes, "max_bytes")
        self.ttl = check_ttl(ttl, "ttl")
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.evictions = 0
        self.invalidations = 0
        self.bypasses = 0
        self.clears = 0

    def get(self, key: Hashable, version: Hashable) -> pa.Table | None:
        """The table stored under `key` at `version`, or None (a miss)."""
        now = time.monotonic()
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and (
                entry.version != version or (entry.expires is not None and now >= entry.expires)
            ):
                self._drop(key)
                self.invalidations += 1
                entry = None
            if entry is None:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return entry.table

    def put(
        self, key: Hashable, version: Hashable, table: pa.Table, ttl: float | None = None
    ) -> bool:
        """Store `table`; False when it alone is larger than the byte bound (not stored).
        The entry lives `ttl` seconds, or the cache's own TTL, whichever is shorter."""
        nbytes = int(table.nbytes)
        if nbytes > self.max_bytes:
            return False
        limits = [t for t in (ttl, self.ttl) if t is not None]
        expires = time.monotonic() + min(limits) if limits else None
        with self._lock:
            if key in self._entries:
                self._drop(key)
            self._entries[key] = _Entry(version, table, nbytes, expires)
            self._bytes += nbytes
            while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
                oldest = next(iter(self._entries))
                self._drop(oldest)
                self.evictions += 1
        return True

    def note_bypass(self) -> None:
        """Count a query that asked not to be cached (`cache: false`)."""
        with self._lock:
            self.bypasses += 1

    def clear(self) -> None:
        """Drop every entry (a model reload; counters are kept)."""
        with self._lock:
            self._entries.clear()
            self._bytes = 0
            self.clears += 1

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {
                "hits": self.hits,
                "misses": self.misses,
                "evictions": self.evictions,
                "invalidations": self.invalidations,
                "bypasses": self.bypasses,
                "clears": self.clears,
                "entries": len(self._entries),
                "bytes": self._bytes,
                "max_entries": self.max_entries,
                "max_bytes": self.max_bytes,
                "ttl": self.ttl,
            }

    def __len__(self) -> int:
        return len(self._entries)

    def _drop(self, key: Hashable) -> None:
        entry = self._entries.pop(key)
        self._bytes -= entry.nbytes


def check_ttl(value: Any, what: str) -> float | None:
    """A TTL in seconds (a positive number) or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ArgumentError(f"{what} must be a positive number of seconds, got {bounded(value)}")
    return float(value)


def _positive_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ArgumentError(f"{what} must be a positive integer, got {bounded(value)}")
    return value
