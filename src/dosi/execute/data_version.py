"""The data version a cached answer is stamped with (issue 28 item 4): what must stay the same
for a stored result to still be the warehouse's answer.

* Files dosi reads itself: the embedded DuckDB file (and its write-ahead log), a local-file
  engine's database or Parquet folder, and the Parquet / CSV / JSON files the model's dataset
  sources name. Each file's path, size, mtime_ns and inode: a rewrite, an append or a swap
  (`os.replace`) changes at least one of them.
* A declared refresh key: connection option `cache_refresh_key`, a SELECT whose answer
  changes when the data does (`SELECT max(updated_at) FROM orders`), run on the connection
  at most every `cache_refresh_every` seconds (default 0: before every lookup).
* A TTL: connection option `cache_ttl` (seconds), or the cache's own.

A connection with none of these (a server without a refresh key or TTL, a client object
handed in) is never cached: when dosi cannot know the data's version it does not guess.
"""

from __future__ import annotations

import glob
import os
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from dosi.errors import ExecuteError, bounded
from dosi.execute.connections import ENGINE_TYPES, Profile
from dosi.execute.result_cache import check_ttl

#: file name endings of the data files a dataset source may read (DuckDB replacement scans,
#: read_parquet / read_csv / read_json arguments)
DATA_SUFFIXES = (".parquet", ".pq", ".csv", ".tsv", ".json", ".ndjson", ".jsonl", ".gz", ".zst")
#: at most this many files of a glob or a folder are stat-ed (a bigger set is not cacheable)
MAX_FILES = 4096

FileStamp = tuple[str, int, int, int] | tuple[str, None, None, None]


def path_stamps(path: str) -> tuple[FileStamp, ...]:
    """(path, size, mtime_ns, inode) of a file, of every file a glob matches, or of every
    file below a folder; a missing file is stamped with Nones (its appearance changes it)."""
    if any(c in path for c in "*?["):
        found = sorted(glob.glob(path, recursive=True))
        return tuple(s for f in found[:MAX_FILES] for s in path_stamps(f))
    try:
        st = os.stat(path)
    except OSError:
        return ((path, None, None, None),)
    stamp: FileStamp = (path, st.st_size, st.st_mtime_ns, st.st_ino)
    if not stat.S_ISDIR(st.st_mode):  # the stat above says it (no second stat per call)
        return (stamp,)
    below = sorted(str(p) for p in Path(path).rglob("*") if p.is_file())
    return (stamp, *(s for f in below[:MAX_FILES] for s in path_stamps(f)))


def files_version(paths: Iterable[str]) -> tuple[FileStamp, ...]:
    return tuple(s for p in paths for s in path_stamps(p))


#: a file written this recently may be written again within the clock's granularity without
#: its mtime changing (the "racy" case git also guards against): such an answer is not stored
RACY_NS = 100_000_000


def settled(stamps: Iterable[FileStamp], now_ns: int | None = None) -> bool:
    """No stamped file was modified within the last RACY_NS: a later write will show."""
    now = time.time_ns() if now_ns is None else now_ns
    return all(s[2] is None or now - s[2] > RACY_NS for s in stamps)


def profile_files(profile: Profile) -> tuple[str, ...]:
    """The files a connection's data lives in when dosi opens them itself (none for a server
    or a client object): the DuckDB file and its `.wal`, a SQLite / chDB / DataFusion uri."""
    if profile.client is not None or not profile.uri:
        return ()
    engine = ENGINE_TYPES.get(profile.type)
    if engine is None or profile.uri.startswith(":") or "://" in profile.uri:
        return ()
    if engine.embedded:
        return (profile.uri, profile.uri + ".wal")
    if engine.local_file:
        return (profile.uri,)
    return ()


def local_data(profile: Profile) -> bool:
    """dosi opens this connection's data itself (an embedded or local-file engine, no client
    object), so its files are the whole data version."""
    if profile.client is not None:
        return False
    engine = ENGINE_TYPES.get(profile.type)
    return engine is not None and (engine.embedded or engine.local_file)


def source_files(sources: Iterable[exp.Expression]) -> tuple[str, ...]:
    """The data files the model's dataset sources name: quoted table names and string
    literals ending in a data-file suffix (`FROM 'orders.parquet'`,
    `read_parquet('events/*.parquet')`), in first-seen order."""
    found: dict[str, None] = {}
    for source in sources:
        for node in source.walk():
            text = None
            if isinstance(node, exp.Table):
                text = node.name
            elif isinstance(node, exp.Literal) and node.is_string:
                text = node.this
            if text and text.lower().rstrip("*").endswith(DATA_SUFFIXES):
                local = "://" not in text
                found.setdefault(str(Path(text).expanduser()) if local else text, None)
    return tuple(found)


@dataclass(frozen=True)
class CachePolicy:
    """How one connection's answers may be cached: from its profile options."""

    cacheable: bool
    ttl: float | None = None
    refresh_key: str | None = None
    refresh_every: float = 0.0


def cache_policy(
    profile: Profile, engine_ttl: float | None, remote_sources: bool = False
) -> CachePolicy:
    """The profile's `cache` (false: never), `cache_ttl`, `cache_refresh_key` and
    `cache_refresh_every` options; a remote connection, a client object or a model reading
    remote files (`s3://...`, `https://...`) is cacheable only with a refresh key or a TTL
    (its own or the engine's)."""
    opts = profile.options
    enabled = opts.get("cache", True)
    if not isinstance(enabled, bool):
        raise _config(profile, "cache", "true or false", enabled)
    ttl = check_ttl(opts.get("cache_ttl"), f"connection `{profile.name}` option cache_ttl")
    key = opts.get("cache_refresh_key")
    if key is not None and (not isinstance(key, str) or not key.strip()):
        raise _config(profile, "cache_refresh_key", "a SELECT statement", key)
    every = opts.get("cache_refresh_every", 0)
    if isinstance(every, bool) or not isinstance(every, (int, float)) or every < 0:
        raise _config(profile, "cache_refresh_every", "a number of seconds >= 0", every)
    limits = [t for t in (ttl, engine_ttl) if t is not None]
    ttl = min(limits) if limits else None
    known = (local_data(profile) and not remote_sources) or key is not None or ttl is not None
    return CachePolicy(enabled and known, ttl, key, float(every))


def refresh_key_sql(text: str, dialect: str) -> str:
    """The refresh key statement, parsed and rendered in the connection's dialect: one
    SELECT (a statement that writes, or several, is a `config` error)."""
    try:
        tree = sqlglot.parse(text, read=dialect)
    except SqlglotError as exc:
        raise ExecuteError(
            "config", f"cache_refresh_key does not parse: {str(exc)[:200]}"
        ) from None
    if len(tree) != 1 or not isinstance(tree[0], exp.Query):
        raise ExecuteError(
            "config",
            "cache_refresh_key must be one SELECT statement",
            hint="e.g. cache_refresh_key: SELECT max(updated_at) FROM orders",
        )
    return tree[0].sql(dialect=dialect)


def _config(profile: Profile, option: str, wanted: str, got: Any) -> ExecuteError:
    return ExecuteError(
        "config",
        f"connection `{profile.name}` option {option} must be {wanted}, got {bounded(got)}",
        hint="see docs/rollups-and-cache.md (the result cache)",
    )
