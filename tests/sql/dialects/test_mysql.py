"""MySQL / MariaDB (dosi.sql.dialects.mysql): no NULLS clause (a leading CASE key instead), the
ORDER BY moves outside so select aliases never clash with joined columns, epochs are
wall-clock TIMESTAMPDIFF / TIMESTAMPADD, and covariance window functions are gated. The
conformance suite runs the full matrix on MariaDB when DOSI_TEST_MARIADB is set."""

from __future__ import annotations

from sqlglot import exp, parse_one

from dosi.sql.dialects import get_dialect

MYSQL = get_dialect("mysql")


def test_nulls_first_needs_a_case_key() -> None:
    keys = MYSQL.ordered(exp.column("x"), desc=False, nulls="last")
    assert [k.sql("mysql") for k in keys] == ["CASE WHEN x IS NULL THEN 1 ELSE 0 END ASC", "x ASC"]


def test_order_by_moves_outside_with_the_ctes_on_top() -> None:
    tree = parse_one("WITH a AS (SELECT 1 AS k) SELECT a.k AS k FROM a ORDER BY k LIMIT 3")
    sql = MYSQL.finalize(tree).sql("mysql")
    assert sql == (
        "WITH a AS (SELECT 1 AS k) SELECT * FROM (SELECT a.k AS k FROM a) AS dosi_result "
        "ORDER BY k LIMIT 3"
    )


def test_epochs_are_wall_clock() -> None:
    assert MYSQL.epoch_us(exp.column("ts")).sql("mysql") == (
        "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', ts)"
    )
    assert not MYSQL.supports_window_function("corr")
    assert MYSQL.supports_window_function("stddev_pop")
    assert get_dialect("mariadb").key == "mariadb"
