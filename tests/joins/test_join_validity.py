"""D-VALIDITY `validity` (dosi 1.15, issue 20 bed `scd_join`): a join that lands on a slowly
changing dimension reads the version valid at the fact row's time, `start <= t < end` (an open
`end` is the current version), so a fact row meets at most one version and nothing fans out.

Expected values come from plain Python over the rows below (`version_of`), built to break the
naive versions: listing 1 has a gap between its versions (a booking on the first version's
`end` day and one inside the gap match nothing), listing 2's versions meet at 01-05 (a booking
on that day reads the new one), a booking before any version and one of an unknown listing.
Listing 1's owner changes between versions, so a dimension reached *through* the SCD follows
the version too. Runs on DuckDB, and on PostgreSQL when DOSI_TEST_POSTGRES is set.
Requirement IDs: CORE-FAN-01 (no fan-out), ENV-REQ-03 (`validity` is silent: `requires`).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

from dosi.engine import Engine
from dosi.errors import ModelError, QueryError

D = dt.date
#: (listing_id, user_id, capacity, valid_from, valid_to)
VERSIONS = [
    (1, 10, 2, D(2024, 1, 1), D(2024, 1, 10)),
    (1, 20, 4, D(2024, 1, 15), None),  # a gap from 01-10 to 01-15
    (2, 10, 3, D(2024, 1, 1), D(2024, 1, 5)),
    (2, 10, 5, D(2024, 1, 5), None),  # meets the first version at 01-05
]
USERS = [(10, "CA"), (20, "NY")]
#: (booking_id, listing_id, ds, price)
BOOKINGS = [
    (1, 1, D(2024, 1, 3), 10),
    (2, 1, D(2024, 1, 10), 20),  # on version 1's end: excluded, and the gap begins
    (3, 1, D(2024, 1, 12), 30),  # inside the gap
    (4, 1, D(2024, 1, 15), 40),  # on version 2's start
    (5, 2, D(2024, 1, 4), 50),
    (6, 2, D(2024, 1, 5), 60),  # the boundary: the new version
    (7, 3, D(2024, 1, 5), 70),  # no such listing
    (8, 2, D(2023, 12, 31), 80),  # before any version
]

VALIDITY = {
    "v": "1.15",
    "requires": ["validity"],
    "validity": {"start": "valid_from", "end": "valid_to"},
}


def _model(validity: dict[str, Any] | None = VALIDITY, fact_time: bool = True) -> str:
    listing_ext = [{"vendor_name": "DATUS", "data": json.dumps(validity)}] if validity else []
    fact_fields = [
        {"name": "booking_id", "expression": _e("booking_id")},
        {"name": "listing_id", "expression": _e("listing_id")},
        {"name": "price", "expression": _e("price")},
    ]
    if fact_time:
        fact_fields.append({"name": "ds", "expression": _e("ds"), "dimension": {"is_time": True}})
    doc = {
        "version": "0.2.0.dev0",
        "semantic_model": [
            {
                "name": "scd",
                "datasets": [
                    {
                        "name": "bookings",
                        "source": "{schema}.bookings",
                        "primary_key": ["booking_id"],
                        "fields": fact_fields,
                    },
                    {
                        "name": "listings",
                        "source": "{schema}.listings",
                        "primary_key": ["listing_id", "valid_from"],
                        "fields": [
                            {"name": "listing_id", "expression": _e("listing_id")},
                            {"name": "user_id", "expression": _e("user_id")},
                            {"name": "capacity", "expression": _e("capacity")},
                            *(
                                {"name": n, "expression": _e(n), "dimension": {"is_time": True}}
                                for n in ("valid_from", "valid_to")
                            ),
                        ],
                        "custom_extensions": listing_ext,
                    },
                    {
                        "name": "users",
                        "source": "{schema}.users",
                        "primary_key": ["user_id"],
                        "fields": [
                            {"name": "user_id", "expression": _e("user_id")},
                            {"name": "home_state", "expression": _e("home_state")},
                        ],
                    },
                ],
                "relationships": [
                    {
                        "name": "bookings_to_listings",
                        "from": "bookings",
                        "to": "listings",
                        "from_columns": ["listing_id"],
                        "to_columns": ["listing_id"],
                    },
                    {
                        "name": "listings_to_users",
                        "from": "listings",
                        "to": "users",
                        "from_columns": ["user_id"],
                        "to_columns": ["user_id"],
                    },
                ],
                "metrics": [
                    {"name": "bookings", "expression": _e("COUNT(bookings.booking_id)")},
                    {"name": "revenue", "expression": _e("SUM(bookings.price)")},
                    {"name": "listing_versions", "expression": _e("COUNT(listings.listing_id)")},
                ],
            }
        ],
    }
    return yaml.safe_dump(doc, sort_keys=False)


def _e(sql: str) -> dict[str, Any]:
    return {"dialects": [{"dialect": "ANSI_SQL", "expression": sql}]}


def version_of(listing: int, day: dt.date) -> tuple[int, int, int, D, D | None] | None:
    """The version of `listing` valid on `day`: start <= day < end (no end: still valid)."""
    found = [
        v for v in VERSIONS if v[0] == listing and v[3] <= day and (v[4] is None or day < v[4])
    ]
    assert len(found) <= 1
    return found[0] if found else None


def _capacity(b: tuple[int, int, D, int]) -> int | None:
    v = version_of(b[1], b[2])
    return v[2] if v else None


def _state(b: tuple[int, int, D, int]) -> str | None:
    v = version_of(b[1], b[2])
    return dict(USERS)[v[1]] if v else None


def _load_duckdb(path: Path) -> None:
    con = duckdb.connect(str(path))
    _create(con.execute)
    con.executemany("INSERT INTO listings VALUES (?, ?, ?, ?, ?)", VERSIONS)
    con.executemany("INSERT INTO users VALUES (?, ?)", USERS)
    con.executemany("INSERT INTO bookings VALUES (?, ?, ?, ?)", BOOKINGS)
    con.close()


def _create(run: Any, schema: str = "main") -> None:
    run(
        f"CREATE TABLE {schema}.listings (listing_id INT, user_id INT, capacity INT, valid_from DATE, valid_to DATE)"
    )
    run(f"CREATE TABLE {schema}.users (user_id INT, home_state TEXT)")
    run(f"CREATE TABLE {schema}.bookings (booking_id INT, listing_id INT, ds DATE, price INT)")


@pytest.fixture(scope="module")
def duck_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("validity") / "scd.duckdb"
    _load_duckdb(path)
    return path


def _duck(db: Path, text: str) -> Engine:
    return Engine(
        model_text=text.replace("{schema}", "main"),
        connections={"db": {"type": "duckdb", "uri": str(db)}},
    )


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def engine(request: pytest.FixtureRequest, duck_db: Path) -> Iterator[Engine]:
    if request.param == "duckdb":
        yield _duck(duck_db, _model())
        return
    dsn = os.environ.get("DOSI_TEST_POSTGRES")
    if not dsn:
        pytest.skip("postgres: set DOSI_TEST_POSTGRES (bash scripts/postgres.sh) to run")
    import psycopg

    schema = f"validity_{uuid.uuid4().hex[:8]}"
    pg = psycopg.connect(dsn, autocommit=True)
    pg.execute(f"CREATE SCHEMA {schema}")
    try:
        _create(pg.execute, schema)
        with pg.cursor() as cur:
            cur.executemany(f"INSERT INTO {schema}.listings VALUES (%s, %s, %s, %s, %s)", VERSIONS)
            cur.executemany(f"INSERT INTO {schema}.users VALUES (%s, %s)", USERS)
            cur.executemany(f"INSERT INTO {schema}.bookings VALUES (%s, %s, %s, %s)", BOOKINGS)
        yield Engine(
            model_text=_model().replace("{schema}", schema),
            connections={"db": {"type": "postgres", "client": pg}},
        )
    finally:
        pg.execute(f"DROP SCHEMA {schema} CASCADE")
        pg.close()


def _by(engine: Engine, metric: str, *group_by: str) -> dict[Any, Any]:
    rows = engine.execute({"metrics": [metric], "group_by": list(group_by)})["rows"]
    out = {}
    for r in rows:
        key = tuple(str(r[k.split(".")[-1]]) if ":" in k else r[k.split(".")[-1]] for k in group_by)
        out[key[0] if len(key) == 1 else key] = r[metric]
    return out


def test_each_booking_reads_the_version_valid_on_its_day(engine: Engine) -> None:
    want = Counter(_capacity(b) for b in BOOKINGS)
    assert _by(engine, "bookings", "listings.capacity") == dict(want)
    assert dict(want) == {2: 1, None: 4, 4: 1, 3: 1, 5: 1}


def test_nothing_fans_out(engine: Engine) -> None:
    """Every booking is counted once: the sum over capacities is the plain total."""
    got = _by(engine, "revenue", "listings.capacity")
    assert sum(got.values()) == sum(b[3] for b in BOOKINGS)


def test_a_dimension_through_the_scd_follows_the_version(engine: Engine) -> None:
    """listing 1 changed owner: the 01-15 booking is NY's, the 01-03 one CA's."""
    want: Counter[str | None] = Counter()
    for b in BOOKINGS:
        want[_state(b)] += b[3]
    assert _by(engine, "revenue", "users.home_state") == dict(want)


def test_with_the_time_axis_and_a_filter(engine: Engine) -> None:
    res = engine.execute(
        {
            "metrics": ["bookings"],
            "group_by": ["bookings.ds", "listings.capacity"],
            "where_sql": "listings.capacity >= 3",
        }
    )["rows"]
    got = sorted((str(r["ds"])[:10], r["capacity"], r["bookings"]) for r in res)
    want = Counter((str(b[2]), _capacity(b)) for b in BOOKINGS if (_capacity(b) or 0) >= 3)
    assert got == sorted((d, c, n) for (d, c), n in want.items())


def test_detail_rows_read_the_valid_version(engine: Engine) -> None:
    res = engine.select(
        {"from": "bookings", "fields": ["bookings.booking_id", "listings.capacity"], "limit": 100}
    )["rows"]
    got = sorted((r["booking_id"], r["listings__capacity"]) for r in res)
    assert got == sorted((b[0], _capacity(b)) for b in BOOKINGS)


def test_a_metric_of_the_scd_itself_counts_every_version(engine: Engine) -> None:
    assert engine.execute({"metrics": ["listing_versions"]})["rows"] == [
        {"listing_versions": len(VERSIONS)}
    ]


def test_without_validity_the_join_fans_out(duck_db: Path) -> None:
    """The same model without the key: every version matches (why the key is silent)."""
    got = _by(_duck(duck_db, _model(validity=None)), "revenue", "listings.capacity")
    assert sum(got.values()) > sum(b[3] for b in BOOKINGS)


def test_the_range_join_is_in_the_on_clause(duck_db: Path) -> None:
    sql = _duck(duck_db, _model()).compile(
        {"metrics": ["bookings"], "group_by": ["listings.capacity"]}
    )["sql"]
    on = sql.upper().split(" ON ", 1)[1]
    assert "VALID_FROM" in on and "VALID_TO IS NULL" in on


def test_a_fact_without_a_time_field_is_refused(duck_db: Path) -> None:
    engine = _duck(duck_db, _model(fact_time=False))
    with pytest.raises(QueryError) as err:
        engine.execute({"metrics": ["bookings"], "group_by": ["listings.capacity"]})
    assert err.value.code == "validity_needs_time"
    assert err.value.candidates == ["listings"]


@pytest.mark.parametrize(
    ("validity", "fragment"),
    [
        ({"start": "valid_from"}, "needs `end`"),
        ({"start": "capacity", "end": "valid_to"}, "is not a time field"),
        ({"start": "valid_from", "end": "closed_at"}, "is not a field of it"),
        ({"start": "valid_from", "end": "valid_to", "as_of": "x"}, "unknown keys"),
    ],
)
def test_a_malformed_validity_is_a_model_issue(
    duck_db: Path, validity: dict[str, Any], fragment: str
) -> None:
    payload = {"v": "1.15", "requires": ["validity"], "validity": validity}
    with pytest.raises(ModelError) as err:
        _duck(duck_db, _model(validity=payload))
    issues = [i for i in err.value.issues if i.code == "invalid_datus_extension"]
    assert any(fragment in i.message for i in issues), err.value.issues
