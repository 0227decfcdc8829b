"""Apache DataFusion through its Python SessionContext (`pip install 'dosi[datafusion]'`). A
`uri` names a folder of Parquet files (each `<table>.parquet` becomes `main.<table>`) or a single
Parquet file; a SessionContext handed in is used as it is. The result streams as record
batches, and cancel stops the stream at the next batch boundary (DataFusion has no interrupt)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pyarrow as pa

from dosi.execute.runner import Deadline, failure, require

_SCHEMA = "main"


class DataFusionRunner:
    engine = "DataFusion"
    dialect = "datafusion"

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self._stop = threading.Event()

    @classmethod
    def connect(cls, uri: str | None, options: dict[str, Any]) -> DataFusionRunner:
        datafusion = require("datafusion", "datafusion", "DataFusion")
        ctx = datafusion.SessionContext()
        if uri:
            register_parquet(ctx, Path(uri).expanduser(), options.get("schema", _SCHEMA))
        return cls(ctx)

    def run(self, sql: str, timeout_secs: float | None = None) -> pa.Table:
        self._stop.clear()
        deadline = Deadline(timeout_secs, self.cancel)
        with deadline:
            try:
                df = self.ctx.sql(sql)
                schema = df.schema()
                batches = []
                for batch in df.execute_stream():
                    if self._stop.is_set():
                        raise RuntimeError("the query was cancelled")
                    # batches may differ in decimal width: each is cast to the plan's schema
                    batches.append(pa.Table.from_batches([batch.to_pyarrow()]).cast(schema))
            except Exception as exc:
                raise failure(self.engine, exc, sql, deadline, timeout_secs) from None
        return pa.concat_tables(batches) if batches else schema.empty_table()

    def cancel(self) -> None:
        self._stop.set()

    def close(self) -> None:
        """A SessionContext holds no server resources; nothing to release."""


def register_parquet(ctx: Any, path: Path, schema: str = _SCHEMA) -> None:
    """Register `path` (a Parquet file, or a folder of them) as `<schema>.<stem>` tables."""
    files = sorted(path.glob("*.parquet")) if path.is_dir() else [path]
    if schema:
        ctx.sql(f'CREATE SCHEMA IF NOT EXISTS "{schema.replace(chr(34), "")}"')
    for f in files:
        name = f"{schema}.{f.stem}" if schema else f.stem
        ctx.register_parquet(name, str(f))
