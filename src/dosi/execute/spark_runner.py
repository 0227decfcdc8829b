"""Apache Spark through pyspark (`pip install 'dosi[spark]'`): `uri` `local[N]` starts an
in-process Spark (Java 17+), `sc://host:15002` connects to a cluster's Spark Connect server, and
a SparkSession handed in is used as it is. Sessions dosi starts use the UTC session time zone
(wall-clock timestamps, as DuckDB's). Each query runs under a job tag; cancel interrupts the
jobs carrying it (Spark stops their tasks).

A Spark Connect session dosi opens gets a short client retry policy (`client_retries`, default
2 retries within about a second): pyspark's own default waits at least ten minutes for a
server that went away, which held a request that long; dosi's recovery reconnects with its own
bounded backoff instead (issue 29, item 2). Each connect creates a new session, so a
reconnect after a server restart never gets the dead one back."""

from __future__ import annotations

import contextlib
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
        target = uri or "local[2]"
        if target.startswith("sc://"):
            return cls(connect_session(target, options), owned=True)
        sql = require("pyspark.sql", "spark", "Spark")
        builder = sql.SparkSession.builder.appName(options.get("app_name", "dosi"))
        builder = builder.master(target).config("spark.sql.session.timeZone", "UTC")
        builder = builder.config("spark.ui.enabled", "false")
        builder = builder.config("spark.ui.showConsoleProgress", "false")
        for key, value in (options.get("conf") or {}).items():
            builder = builder.config(str(key), str(value))
        # getOrCreate hands back a session the application already runs: never stop that one
        owned = sql.SparkSession.getActiveSession() is None
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
        if not self.owned:
            return
        client = getattr(self.spark, "client", None)
        if callable(getattr(client, "release_session", None)):
            # a Spark Connect session: release it and close the channel; its `stop()` would
            # also stop a local Connect server the application started in this process
            with contextlib.suppress(Exception):  # a server that is gone has nothing to release
                client.release_session()
            client.close()
            return
        self.spark.stop()


def connect_session(target: str, options: dict[str, Any]) -> Any:
    """A new Spark Connect session whose client gives up on an unreachable server within
    about a second (the retry policy is set before the first call to the server)."""
    connect = require("pyspark.sql.connect.session", "spark", "Spark")
    session = connect.SparkSession(connection=target)
    bounded_retries(session, int(options.get("client_retries", 2)))
    try:
        for key, value in (options.get("conf") or {}).items():
            session.conf.set(str(key), str(value))
    except Exception as exc:
        raise failure("Spark", exc, "", None, None) from None
    return session


def bounded_retries(session: Any, retries: int) -> None:
    """A Spark Connect client that gives up on an unreachable server within about a second."""
    client = getattr(session, "client", None)
    if client is None or not hasattr(client, "set_retry_policies"):
        return
    policies = require("pyspark.sql.connect.client.retries", "spark", "Spark")
    client.set_retry_policies(
        [policies.DefaultPolicy(max_retries=retries, initial_backoff=50, max_backoff=500)]
    )
