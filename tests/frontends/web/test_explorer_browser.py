"""The web explorer at `/` in headless Chromium (Playwright): load the page, pick from the
catalog, press Run, read the table, see the chart (a line for time series, bars otherwise)."""

from __future__ import annotations

import decimal
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from servekit import Server

from dosi import Engine

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason="chromium is not installed (scripts/chromium.sh installs it: apt-get install chromium)",
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def _table(page: Any) -> tuple[list[str], list[list[str]]]:
    head = page.locator("#result thead th").all_inner_texts()
    rows = [r.locator("td").all_inner_texts() for r in page.locator("#result tbody tr").all()]
    return head, rows


def test_explorer_runs_a_time_series_and_a_bar_chart(
    browser: Any, server: Server, engine: Engine, shop_db: Path
) -> None:
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server.url + "/")
    page.wait_for_selector("body[data-catalog=loaded]", timeout=30000)
    metric_names = page.locator("#metrics option").evaluate_all("os => os.map(o => o.value)")
    assert metric_names == [m["name"] for m in engine.metrics()]
    dims = page.locator("#dimensions option").evaluate_all("os => os.map(o => o.value)")
    assert "orders.channel" in dims and "orders.amount" not in dims  # is_dimension: false
    assert "metric_time" not in dims and len(dims) == len(set(dims))  # the grain control

    # time series: revenue and order_count per month in 2024
    page.select_option("#metrics", ["revenue", "order_count"])
    page.select_option("#grain", "month")
    page.fill("#start", "2024-01-01")
    page.fill("#end", "2025-01-01")
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_selector("body[data-state=done]", timeout=30000)
    head, rows = _table(page)
    expected = engine.execute(
        {
            "metrics": ["revenue", "order_count"],
            "group_by": ["metric_time:month"],
            "time_range": {"start": "2024-01-01", "end": "2025-01-01"},
            "order_by": [{"key": "metric_time__month"}],
        },
        db_path=shop_db,
    )
    assert head == expected["columns"]
    assert [decimal.Decimal(r[1]) for r in rows] == [x["revenue"] for x in expected["rows"]]
    assert [int(r[2]) for r in rows] == [x["order_count"] for x in expected["rows"]]
    assert page.locator("#chart svg[data-kind=line] path.series").count() == 2
    assert "SUM(orders.amount)" in page.inner_text("#sql")

    # no time grain, one dimension: bars, one per channel
    page.select_option("#grain", "")
    page.select_option("#metrics", ["revenue"])
    page.select_option("#dimensions", ["orders.channel"])
    page.evaluate("document.body.dataset.state = ''")
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_selector("body[data-state=done]", timeout=30000)
    head, rows = _table(page)
    assert head == ["channel", "revenue"]
    assert page.locator("#chart svg[data-kind=bar] rect.bar").count() == len(rows) == 4

    # a filter picked from the catalog: only two channels remain
    page.select_option("#filter-field", "orders.channel")
    page.select_option("#filter-op", "in")
    page.fill("#filter-value", "web, store")
    page.get_by_role("button", name="Add filter").click()
    assert page.inner_text("#filters").startswith("orders.channel IN ('web', 'store')")
    page.evaluate("document.body.dataset.state = ''")
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_selector("body[data-state=done]", timeout=30000)
    _, rows = _table(page)
    filtered = engine.execute(
        {
            "metrics": ["revenue"],
            "group_by": ["orders.channel"],
            "where_sql": "orders.channel IN ('web', 'store')",
            "time_range": {"start": "2024-01-01", "end": "2025-01-01"},  # still set in the page
        },
        db_path=shop_db,
    )
    assert sorted((r[0], decimal.Decimal(r[1])) for r in rows) == sorted(
        (x["channel"], x["revenue"]) for x in filtered["rows"]
    )

    # a bad filter shows the structured error
    page.fill("#where", "orders.nope = 1")
    page.evaluate("document.body.dataset.state = ''")
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_selector("body[data-state=error]", timeout=30000)
    assert "[unknown_field]" in page.inner_text("#error")
    assert errors == []
    page.close()
