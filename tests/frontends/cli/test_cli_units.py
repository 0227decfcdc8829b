"""Unit tests of the CLI helpers: query flags, rendering, JSON safety."""

from __future__ import annotations

import json

import pytest

from dosi.frontends.cli import output as cli_output
from dosi.frontends.cli.output import CliError, cell_text, dumps
from dosi.frontends.cli.query_input import command_line, flags_query, order_item, split_top_level


def test_split_top_level():
    assert split_top_level("a, b,c") == ["a", "b", "c"]
    assert split_top_level("metric_time:hop(1h, 15m),orders.x") == [
        "metric_time:hop(1h, 15m)",
        "orders.x",
    ]
    assert split_top_level(" , ") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("revenue", {"key": "revenue", "desc": False}),
        ("-revenue", {"key": "revenue", "desc": True}),
        ("+revenue", {"key": "revenue", "desc": False}),
        ("revenue:desc", {"key": "revenue", "desc": True}),
        ("revenue:ASC", {"key": "revenue", "desc": False}),
        ("revenue desc", {"key": "revenue", "desc": True}),
        ("metric_time:month", {"key": "metric_time:month", "desc": False}),
        ("metric_time:month:desc", {"key": "metric_time:month", "desc": True}),
    ],
)
def test_order_item(text, expected):
    assert order_item(text) == expected


def test_order_item_empty():
    with pytest.raises(CliError):
        order_item("-")


def test_flags_query_shapes():
    q = flags_query(
        metrics=["revenue,order_count", "aov"],
        group_by=["metric_time:month"],
        where=[],
        start="2024-01-01",
        end=None,
        time_dimension="metric_time",
        order_by=["-revenue"],
        limit=5,
    )
    assert q == {
        "metrics": ["revenue", "order_count", "aov"],
        "group_by": ["metric_time:month"],
        "time_range": {"start": "2024-01-01", "dimension": "metric_time"},
        "order_by": [{"key": "revenue", "desc": True}],
        "limit": 5,
    }
    assert flags_query(["m"], [], [], None, None, None, [], None) == {"metrics": ["m"]}


def test_command_line_round_trip():
    q = {
        "metrics": ["revenue"],
        "group_by": ["orders.status"],
        "where_sql": "orders.channel = 'web'",
        "time_range": {"start": "2024-01-01", "end": "2025-01-01"},
        "order_by": [{"key": "revenue", "desc": True}],
        "limit": 2,
    }
    line = command_line(q)
    assert line == (
        "dosi query -M revenue -g orders.status --where 'orders.channel = '\"'\"'web'\"'\"'' "
        "--start 2024-01-01 --end 2025-01-01 --order-by=-revenue --limit 2"
    )


def test_json_is_strict():
    text = dumps({"a": float("nan"), "b": [float("inf"), 1.5], "c": (1, 2)})
    assert json.loads(text) == {"a": None, "b": [None, 1.5], "c": [1, 2]}


def test_cell_text():
    assert cell_text(None) == "NULL"
    assert cell_text(True) == "true"
    assert cell_text(0.1 + 0.2) == "0.3"
    assert cell_text(1234.5, scale=2) == "1234.50"
    assert cell_text(["a", "b"]) == "a, b"
    assert cell_text({"k": 1}) == '{"k": 1}'


def test_rich_table_on_a_terminal(monkeypatch, capsys):
    monkeypatch.setattr(cli_output, "stdout_is_terminal", lambda: True)
    cli_output.print_table(
        ["channel", "revenue"],
        [{"channel": "web", "revenue": 1.5}, {"channel": None, "revenue": 2.25}],
        scales={"revenue": 2},
    )
    out = capsys.readouterr().out
    assert "channel" in out and "web" in out
    assert "1.50" in out and "2.25" in out
    assert "NULL" in out


def test_plain_table_empty_and_midnight(capsys):
    cli_output.print_table(["a"], [])
    assert capsys.readouterr().out.splitlines() == ["a", "-"]
    cli_output.print_table(["m"], [{"m": "2024-01-01 00:00:00"}, {"m": None}])
    assert capsys.readouterr().out.splitlines()[2:] == ["2024-01-01", "NULL"]
    cli_output.print_table(["m"], [{"m": "2024-01-01 00:00:00"}, {"m": "2024-01-01 10:00:00"}])
    assert "2024-01-01 10:00:00" in capsys.readouterr().out


def test_empty_result(shop):
    r = shop("query", "-M", "revenue", "-g", "orders.status", "--where", "1 = 0")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[-1] == "(0 rows)"
    c = shop("query", "-M", "revenue", "-g", "orders.status", "--where", "1 = 0", "-f", "csv")
    assert c.stdout == "status,revenue\n"
