"""Shared helpers for the engine and extension execution tests (loaded by both conftests).

Expected values in these tests never come from the engine: they come from hand-written SQL run
directly on DuckDB over the same tables (`Ref`), or from plain Python over hand-written rows.
"""

from __future__ import annotations

import datetime as dt
import decimal
import importlib.util
import json
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

from dosi.execute.values import json_ready

REPO = Path(__file__).resolve().parents[2]
SHOP_MODEL = REPO / "examples" / "shop" / "model.yaml"
SHOP_GENERATOR = REPO / "examples" / "shop" / "generate.py"


# ------------------------------------------------------------------------------ values


def norm(value: Any) -> Any:
    """One comparable form for engine rows and reference rows (ISO strings, floats)."""
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    return value


def same(a: Any, b: Any, rel: float = 1e-9) -> bool:
    """Equal values, floats compared with a relative tolerance; NULL only equals NULL."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, float) and math.isnan(a):
            return isinstance(b, float) and math.isnan(b)
        return math.isclose(float(a), float(b), rel_tol=rel, abs_tol=1e-9)
    return a == b


def assert_rows_equal(actual: Iterable[Sequence[Any]], expected: Iterable[Sequence[Any]]) -> None:
    """Same multiset of rows (order ignored), values compared with `same`."""
    act = sorted((tuple(norm(v) for v in r) for r in actual), key=_sort_key)
    exp = sorted((tuple(norm(v) for v in r) for r in expected), key=_sort_key)
    assert len(act) == len(exp), f"{len(act)} rows, expected {len(exp)}:\n{act}\n{exp}"
    for a, e in zip(act, exp, strict=True):
        assert len(a) == len(e) and all(same(x, y) for x, y in zip(a, e, strict=True)), (
            f"row {a} != expected {e}\nall rows: {act}\nexpected: {exp}"
        )


def _sort_key(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple((v is None, str(type(v).__name__), v if v is not None else 0) for v in row)


def json_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """A result's rows as every JSON surface (CLI, REST, MCP) writes them: the one rule of
    `dosi.execute.values.json_value` (decimals a number where a double reads them back, else
    a string of their digits), read back by a standard JSON reader."""
    return json.loads(json.dumps(json_ready(result["rows"]), allow_nan=False))


def result_rows(result: dict[str, Any], columns: Sequence[str] | None = None) -> list[tuple]:
    cols = list(columns) if columns is not None else result["columns"]
    return [tuple(r[c] for c in cols) for r in result["rows"]]


def by_key(result: dict[str, Any], *keys: str) -> dict[Any, dict[str, Any]]:
    """Rows indexed by their dimension values (a scalar key for one dimension)."""
    out: dict[Any, dict[str, Any]] = {}
    for r in result["rows"]:
        k = tuple(r[c] for c in keys)
        k = k[0] if len(k) == 1 else k
        assert k not in out, f"duplicate group {k!r}"
        out[k] = r
    return out


# ------------------------------------------------------------------------------ databases


class Ref:
    """Runs hand-written reference SQL on a DuckDB file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.con = duckdb.connect(str(path), read_only=True)

    def rows(self, sql: str) -> list[tuple]:
        return [tuple(norm(v) for v in r) for r in self.con.execute(sql).fetchall()]

    def exact(self, sql: str) -> list[tuple]:
        """DuckDB's own values (DECIMAL as the exact `decimal.Decimal`, as dosi's rows hold it),
        for comparisons digit for digit."""
        return [tuple(r) for r in self.con.execute(sql).fetchall()]

    def scalar(self, sql: str) -> Any:
        rows = self.rows(sql)
        assert len(rows) == 1 and len(rows[0]) == 1, rows
        return rows[0][0]

    def close(self) -> None:
        self.con.close()


def build_shop(db_path: Path) -> Path:
    spec = importlib.util.spec_from_file_location("shop_generate", SHOP_GENERATOR)
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return Path(gen.build(db_path, scale=1))


def make_db(path: Path, statements: Iterable[str]) -> Path:
    con = duckdb.connect(str(path))
    try:
        for s in statements:
            con.execute(s)
    finally:
        con.close()
    return path


# ------------------------------------------------------------------------------ model builders


def expr(text: str) -> dict[str, Any]:
    return {"dialects": [{"dialect": "ANSI_SQL", "expression": text}]}


def datus(payload: dict[str, Any] | str, vendor: str = "DATUS") -> list[dict[str, str]]:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return [{"vendor_name": vendor, "data": data}]


def field(
    name: str,
    expression: str | None = None,
    *,
    datatype: str | None = None,
    is_time: bool | None = None,
    ext: dict[str, Any] | None = None,
) -> dict[str, Any]:
    f: dict[str, Any] = {"name": name, "expression": expr(expression or name)}
    if datatype is not None:
        f["datatype"] = datatype
    if is_time is not None:
        f["dimension"] = {"is_time": is_time}
    if ext is not None:
        f["custom_extensions"] = datus(ext)
    return f


def dataset(
    name: str,
    fields: Sequence[str | dict[str, Any]],
    *,
    source: str | None = None,
    primary_key: Sequence[str] | None = None,
    ext: dict[str, Any] | None = None,
) -> dict[str, Any]:
    d: dict[str, Any] = {"name": name, "source": source or name}
    if primary_key is not None:
        d["primary_key"] = list(primary_key)
    d["fields"] = [field(f) if isinstance(f, str) else f for f in fields]
    if ext is not None:
        d["custom_extensions"] = datus(ext)
    return d


def rel(
    name: str,
    frm: str,
    to: str,
    from_columns: Sequence[str],
    to_columns: Sequence[str],
    ext: dict[str, Any] | None = None,
) -> dict[str, Any]:
    r: dict[str, Any] = {
        "name": name,
        "from": frm,
        "to": to,
        "from_columns": list(from_columns),
        "to_columns": list(to_columns),
    }
    if ext is not None:
        r["custom_extensions"] = datus(ext)
    return r


def metric(name: str, expression: str, ext: dict[str, Any] | None = None) -> dict[str, Any]:
    m: dict[str, Any] = {"name": name, "expression": expr(expression)}
    if ext is not None:
        m["custom_extensions"] = datus(ext)
    return m


def model_doc(
    datasets: Sequence[dict[str, Any]],
    relationships: Sequence[dict[str, Any]] = (),
    metrics: Sequence[dict[str, Any]] = (),
    *,
    name: str = "m",
    ext: dict[str, Any] | None = None,
) -> dict[str, Any]:
    sm: dict[str, Any] = {"name": name, "datasets": list(datasets)}
    if relationships:
        sm["relationships"] = list(relationships)
    if metrics:
        sm["metrics"] = list(metrics)
    if ext is not None:
        sm["custom_extensions"] = datus(ext)
    return {"version": "0.2.0.dev0", "semantic_model": [sm]}


def to_yaml(doc: dict[str, Any]) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


# ------------------------------------------------------------------------------ the mini shop
#
# A hand-sized copy of the shop, small enough that every expected value below is written out
# by hand (see MINI_* constants) and cross-checked with plain SQL in the tests.
#
# customers: 1 east/consumer, 2 west/corporate, 3 NULL region/consumer, 4 east/NULL segment,
#            5 west/consumer (never orders)
# orders:    1..7; order 6 is an orphan (customer 99, channel 'phone', no items);
#            order 7 has amount NULL; channel NULL on order 5
# refunds:   refund 3 belongs to order 50, which does not exist (orphan refund)

MINI_TABLES = [
    """CREATE TABLE customers (id INTEGER, region VARCHAR, segment VARCHAR)""",
    """INSERT INTO customers VALUES
        (1, 'east', 'consumer'), (2, 'west', 'corporate'), (3, NULL, 'consumer'),
        (4, 'east', NULL), (5, 'west', 'consumer')""",
    """CREATE TABLE orders (order_id INTEGER, customer_id INTEGER, order_date DATE,
        ship_date DATE, amount DECIMAL(10,2), discount DECIMAL(10,2), status VARCHAR,
        channel VARCHAR)""",
    """INSERT INTO orders VALUES
        (1, 1, DATE '2024-01-05', DATE '2024-01-07', 100, 10, 'paid', 'web'),
        (2, 1, DATE '2024-01-31', DATE '2024-02-02', 50, 0, 'paid', 'store'),
        (3, 2, DATE '2024-02-01', DATE '2024-02-03', 70, 0, 'refunded', 'web'),
        (4, 3, DATE '2024-03-10', DATE '2024-03-12', 30, 0, 'paid', 'web'),
        (5, 4, DATE '2024-03-31', DATE '2024-04-01', 20, 0, 'paid', NULL),
        (6, 99, DATE '2024-04-01', DATE '2024-04-02', 40, 0, 'paid', 'phone'),
        (7, 2, DATE '2024-04-15', DATE '2024-05-01', NULL, 0, 'paid', 'web')""",
    """CREATE TABLE order_items (order_id INTEGER, line INTEGER, product VARCHAR,
        qty INTEGER, price DECIMAL(10,2))""",
    """INSERT INTO order_items VALUES
        (1, 1, 'A', 2, 30), (1, 2, 'B', 1, 40), (2, 1, 'A', 1, 50), (3, 1, 'C', 7, 10),
        (4, 1, 'B', 3, 10), (5, 1, 'A', 1, 20), (7, 1, 'C', 1, 5)""",
    """CREATE TABLE refunds (refund_id INTEGER, order_id INTEGER, refund_date DATE,
        refund_amount DECIMAL(10,2))""",
    """INSERT INTO refunds VALUES
        (1, 3, DATE '2024-02-10', 70), (2, 1, DATE '2024-05-03', 10),
        (3, 50, DATE '2024-05-20', 5)""",
]


def mini_doc(
    *,
    extra_metrics: Sequence[dict[str, Any]] = (),
    metric_ext: dict[str, dict[str, Any]] | None = None,
    rel_ext: dict[str, dict[str, Any]] | None = None,
    dataset_ext: dict[str, dict[str, Any]] | None = None,
    field_ext: dict[str, dict[str, Any]] | None = None,
    model_ext: dict[str, Any] | None = None,
    ship_is_time: bool = False,
) -> dict[str, Any]:
    """The mini-shop model; `*_ext` attach DATUS payloads by name (`dataset.field` for fields).

    `ship_is_time` makes `orders.ship_date` a second time field (then `orders` has no implicit
    primary time)."""
    metric_ext = metric_ext or {}
    rel_ext = rel_ext or {}
    dataset_ext = dataset_ext or {}
    field_ext = field_ext or {}

    def f(ds: str, name: str, **kw: Any) -> dict[str, Any]:
        return field(name, ext=field_ext.get(f"{ds}.{name}"), **kw)

    datasets = [
        dataset(
            "orders",
            [
                f("orders", "order_id", datatype="Integer"),
                f("orders", "customer_id", datatype="Integer"),
                f("orders", "order_date", datatype="Date"),
                f("orders", "ship_date", datatype="Date", is_time=ship_is_time),
                f("orders", "amount", datatype="Decimal"),
                f("orders", "discount", datatype="Decimal"),
                f("orders", "status", datatype="String"),
                f("orders", "channel", datatype="String"),
            ],
            primary_key=["order_id"],
            ext=dataset_ext.get("orders"),
        ),
        dataset(
            "customers",
            [
                f("customers", "id", datatype="Integer"),
                f("customers", "region", datatype="String"),
                f("customers", "segment", datatype="String"),
            ],
            primary_key=["id"],
            ext=dataset_ext.get("customers"),
        ),
        dataset(
            "order_items",
            [
                f("order_items", "order_id", datatype="Integer"),
                f("order_items", "line", datatype="Integer"),
                f("order_items", "product", datatype="String"),
                f("order_items", "qty", datatype="Integer"),
                f("order_items", "price", datatype="Decimal"),
            ],
            primary_key=["order_id", "line"],
            ext=dataset_ext.get("order_items"),
        ),
        dataset(
            "refunds",
            [
                f("refunds", "refund_id", datatype="Integer"),
                f("refunds", "order_id", datatype="Integer"),
                f("refunds", "refund_date", datatype="Date"),
                f("refunds", "refund_amount", datatype="Decimal"),
            ],
            primary_key=["refund_id"],
            ext=dataset_ext.get("refunds"),
        ),
    ]
    relationships = [
        rel(
            "orders_to_customers",
            "orders",
            "customers",
            ["customer_id"],
            ["id"],
            rel_ext.get("orders_to_customers"),
        ),
        rel(
            "items_to_orders",
            "order_items",
            "orders",
            ["order_id"],
            ["order_id"],
            rel_ext.get("items_to_orders"),
        ),
        rel(
            "refunds_to_orders",
            "refunds",
            "orders",
            ["order_id"],
            ["order_id"],
            rel_ext.get("refunds_to_orders"),
        ),
    ]
    metrics = [
        metric("revenue", "SUM(orders.amount)"),
        metric("order_count", "COUNT(orders.order_id)"),
        metric("customer_count", "COUNT(DISTINCT customers.id)"),
        metric("avg_order", "SUM(orders.amount) / COUNT(orders.order_id)"),
        metric("net_revenue", "SUM(orders.amount) - SUM(orders.discount)"),
        metric("discount_rate", "SUM(orders.amount) / SUM(orders.discount)"),
        metric("max_order", "MAX(orders.amount)"),
        metric("units", "SUM(order_items.qty)"),
        metric("line_count", "COUNT(order_items.line)"),
        metric("refund_total", "SUM(refunds.refund_amount)"),
        metric("refund_count", "COUNT(refunds.refund_id)"),
        metric("refund_share", "SUM(refunds.refund_amount) / SUM(orders.amount)"),
        *extra_metrics,
    ]
    for m in metrics:
        if m["name"] in metric_ext:
            m["custom_extensions"] = datus(metric_ext[m["name"]])
    return model_doc(datasets, relationships, metrics, name="mini", ext=model_ext)


def mini_yaml(**kw: Any) -> str:
    return to_yaml(mini_doc(**kw))


# ------------------------------------------------------------------------------ fixtures
# Re-exported by tests/conftest.py (every folder) and a few folder conftests.


def _engine_cls() -> Any:
    from dosi.engine import Engine

    return Engine


@pytest.fixture(scope="session")
def shop_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_shop(tmp_path_factory.mktemp("shop") / "shop.duckdb")


@pytest.fixture(scope="session")
def shop_ref(shop_db: Path) -> Iterator[Ref]:
    ref = Ref(shop_db)
    yield ref
    ref.close()


@pytest.fixture(scope="session")
def shop(shop_db: Path) -> Iterator[Any]:
    engine = _engine_cls()(model_path=SHOP_MODEL)
    yield engine
    engine.close()


@pytest.fixture(scope="session")
def shop_run(shop: Any, shop_db: Path) -> Callable[..., Any]:
    def run(query: dict[str, Any]) -> Any:
        return shop.execute(query, db_path=shop_db)

    return run


@pytest.fixture(scope="session")
def mini_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_db(tmp_path_factory.mktemp("mini") / "mini.duckdb", MINI_TABLES)


@pytest.fixture(scope="session")
def mini_ref(mini_db: Path) -> Iterator[Ref]:
    ref = Ref(mini_db)
    yield ref
    ref.close()


@pytest.fixture(scope="session")
def mini(mini_db: Path) -> Iterator[Any]:
    engine = _engine_cls()(model_text=mini_yaml())
    yield engine
    engine.close()


@pytest.fixture(scope="session")
def mini_run(mini: Any, mini_db: Path) -> Callable[..., Any]:
    def run(query: dict[str, Any]) -> Any:
        return mini.execute(query, db_path=mini_db)

    return run


@pytest.fixture
def mini_engine(mini_db: Path) -> Iterator[Callable[..., Any]]:
    """Build a mini-shop variant: `make(**mini_doc kwargs, mode=...)` -> (engine, run)."""
    made: list[Any] = []

    def make(mode: str = "datus", **kw: Any) -> tuple[Any, Callable[..., Any]]:
        engine = _engine_cls()(model_text=mini_yaml(**kw), mode=mode)
        made.append(engine)
        return engine, lambda q: engine.execute(q, db_path=mini_db)

    yield make
    for e in made:
        e.close()


# A model over 20 billion generated rows: every query on it runs until it is stopped (the
# cancellation and timeout tests).
SLOW_MODEL = to_yaml(
    model_doc(
        [
            dataset(
                "big",
                [field("x", datatype="Integer"), field("k", datatype="Integer")],
                source="SELECT range AS x, range % 7 AS k FROM range(20000000000)",
            )
        ],
        metrics=[metric("total", "SUM(big.x * big.x % 13)")],
    )
)
