"""Apache Spark through pyspark (`pip install 'dosi[spark]'`): `uri` `local[N]` starts an
in-process Spark (Java 17+), `sc://host:15002` connects to a cluster's Spark Connect server, and
a SparkSession handed in is used as it is. Sessions dosi starts use the UTC session time zone
(wall-clock timestamps, as DuckDB's). Each query runs under a job tag; cancel interrupts the
jobs carrying it (Spark stops their tasks)."""

from __future__ import annotations

import uuid
from typing import Any

import pyarrow as pa

from dosi.execute.runner import Deadline, failure, require


class SparkRunner:
    engine = "Spark"
    dialect = "spark"

    def __init__(self, spark: Any, owned: bool) -> None:
        self.spark = spark
        self.owned = owned
        self.tag = f"dosi-{uuid.uuid4().hex[:12]}"

    @classmethod
    def connect(cls, uri: str | None, options: dict[str, Any]) -> SparkRunner:
        sql = require("pyspark.sql", "spark", "Spark")
        builder = sql.SparkSession.builder.appName(options.get("app_name", "dosi"))
        target = uri or "local[2]"
        if target.startswith("sc://"):
            builder = builder.remote(target)
        else:
            builder = builder.master(target).config("spark.sql.session.timeZone", "UTC")
            builder = builder.config("spark.ui.enabled", "false")
            builder = builder.config("spark.ui.showConsoleProgress", "false")
        for key, value in (options.get("conf") or {}).items():
            builder = builder.config(str(key), str(value))
        # getOrCreate hands back a session the application already runs: never stop that one
        owned = target.startswith("sc://") or sql.SparkSession.getActiveSession() is None
        return cls(builder.getOrCreate(), owned=owned)

    def run(self, sql: str, timeout_secs: float | None = None) -> pa.Table:
        deadline = Deadline(timeout_secs, self.cancel)
        tagged = hasattr(self.spark, "addTag")
        with deadline:
            try:
                if tagged:
                    self.spark.addTag(self.tag)
                df = self.spark.sql(sql)
                if hasattr(df, "toArrow"):
                    return df.toArrow()
                return pa.Table.from_pandas(df.toPandas(), preserve_index=False)
            except Exception as exc:
                raise failure(self.engine, exc, sql, deadline, timeout_secs) from None
            finally:
                if tagged:
                    self.spark.removeTag(self.tag)

    def cancel(self) -> None:
        if hasattr(self.spark, "interruptTag"):
            self.spark.interruptTag(self.tag)
        else:  # pragma: no cover - Spark before 3.5
            self.spark.sparkContext.cancelAllJobs()

    def close(self) -> None:
        if self.owned:
            self.spark.stop()
