"""The web explorer at `/` in headless Chromium (Playwright), issue 26 item 5: the catalog with
search and descriptions, keyboard multi-select, grains and group-bys filtered to what the chosen
metrics allow, a run whose table, chart (the server's Vega-Lite spec through the vendored
vega-embed), pretty SQL and downloads match the Python API, the query in the URL hash, errors
that clear the stale answer and offer the suggested retry, and a screenshot that is not blank.
Every page runs under the server's CSP: no page error and no CSP violation."""

from __future__ import annotations

import csv
import decimal
import io
import json
import re
import shutil
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from enginekit import SHOP_MODEL
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
WAIT = 30000
YEAR_2024 = {"start": "2024-01-01", "end": "2025-01-01"}

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


class Page:
    """One tab, with the page errors and console errors (CSP violations among them) it saw."""

    def __init__(self, browser: Any, url: str) -> None:
        self.page = browser.new_page(
            viewport={"width": 1400, "height": 1000}, accept_downloads=True
        )
        self.problems: list[str] = []
        self.page.on("pageerror", lambda e: self.problems.append(f"pageerror: {e}"))
        self.page.on(
            "console",
            lambda m: self.problems.append(f"console: {m.text}") if m.type == "error" else None,
        )
        self.page.goto(url)
        self.page.wait_for_selector("body[data-catalog=loaded]", timeout=WAIT)

    def run(self, state: str = "done") -> None:
        self.page.evaluate("document.body.dataset.state = ''")
        self.page.get_by_role("button", name="Run", exact=True).click()
        self.page.wait_for_selector(f"body[data-state={state}]", timeout=WAIT)

    def pick(self, picker: str, *names: str) -> None:
        """Set a multi-select to exactly `names` by clicking options (chips removed first)."""
        chips = self.page.locator(f"#{picker}-chips button")
        while chips.count():
            chips.first.click()
        for n in names:
            self.page.locator(f"#{picker} li[data-value='{n}']").click()

    def visible(self, picker: str) -> list[str]:
        return self.page.locator(f"#{picker} li.opt:not([hidden])").evaluate_all(
            "os => os.map(o => o.dataset.value)"
        )

    def table(self) -> tuple[list[str], list[list[str]]]:
        head = self.page.locator("#result thead th").all_inner_texts()
        rows = [
            r.locator("td").all_inner_texts() for r in self.page.locator("#result tbody tr").all()
        ]
        return head, rows

    def close(self, answered: str | None = None) -> None:
        """`answered`: an HTTP status the test provoked (the browser logs it as an error)."""
        noise = f"the server responded with a status of {answered}"
        assert [x for x in self.problems if answered is None or noise not in x] == []
        self.page.close()


def _dec(text: str) -> decimal.Decimal:
    return decimal.Decimal(text.replace(",", ""))


def test_catalog_search_keyboard_and_what_metrics_allow(
    browser: Any, server: Server, engine: Engine
) -> None:
    p = Page(browser, server.url + "/")
    page = p.page
    metrics = engine.metrics()
    assert p.visible("metrics") == [m["name"] for m in metrics]
    revenue = page.locator("#metrics li[data-value=revenue]")
    assert metrics[0]["description"] in revenue.inner_text()  # descriptions in the list
    # search over names and descriptions
    page.fill("#metrics-search", "refund")
    expected = [
        m["name"]
        for m in metrics
        if "refund" in m["name"].lower() or "refund" in (m["description"] or "").lower()
    ]
    assert p.visible("metrics") == expected and len(expected) >= 2
    # keyboard: Esc clears the search, ↓ into the list, ↓ again, Space picks the second metric
    page.press("#metrics-search", "Escape")
    page.press("#metrics-search", "ArrowDown")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Space")
    chips = page.locator("#metrics-chips li").all_inner_texts()
    assert [c.rstrip("×").strip() for c in chips] == [metrics[0]["name"], metrics[1]["name"]]
    page.keyboard.press("Space")  # unpick it again
    assert page.locator("#metrics-chips li").count() == 1
    # Enter in the search box picks the first match
    page.fill("#metrics-search", "revenue_mom")
    page.press("#metrics-search", "Enter")
    assert "revenue_mom" in page.inner_text("#metrics-chips")
    p.pick("metrics", "revenue_mom")
    # grains: only those the metric's time axis allows (revenue_mom: day and month)
    page.wait_for_function("document.querySelectorAll('#grain option').length === 3")
    grains = page.locator("#grain option").evaluate_all("os => os.map(o => o.value)")
    assert (
        grains == ["", *engine.metric("revenue_mom")["time_granularities"]] == ["", "day", "month"]
    )
    assert "needs a time grain" in page.inner_text("#grain-note")
    p.pick("metrics", "items_sold")  # no time axis: no grain
    page.wait_for_function("document.querySelectorAll('#grain option').length === 1")
    # group-bys: the fields every chosen metric reaches
    p.pick("metrics", "revenue", "refund_total")
    both = {d["name"] for d in engine.dimensions("revenue")} & {
        d["name"] for d in engine.dimensions("refund_total")
    }
    page.wait_for_function(
        "document.querySelector('#dimensions li[data-value=\"events.event_type\"]').hidden"
    )
    visible = p.visible("dimensions")
    assert visible and set(visible) <= both and "orders.channel" in visible
    assert "events.event_type" not in visible and "refunds.refund_date" not in visible
    p.close()


def test_run_table_chart_sql_downloads_and_shared_link(
    browser: Any, server: Server, engine: Engine, shop_db: Path, tmp_path: Path
) -> None:
    p = Page(browser, server.url + "/")
    page = p.page
    p.pick("metrics", "revenue", "order_count")
    page.select_option("#grain", "month")
    page.fill("#start", "2024-01-01")
    page.fill("#end", "2025-01-01")
    p.run()
    query = {
        "metrics": ["revenue", "order_count"],
        "group_by": ["metric_time:month"],
        "time_range": YEAR_2024,
        "order_by": [{"key": "metric_time__month"}],
    }
    expected = engine.execute(query, db_path=shop_db)
    head, rows = p.table()
    assert head == expected["columns"]
    assert [_dec(r[1]) for r in rows] == [x["revenue"] for x in expected["rows"]]
    assert all(re.fullmatch(r"[\d,]+\.\d\d", r[1]) for r in rows)  # decimal(…, 2): two places
    assert [int(r[2].replace(",", "")) for r in rows] == [
        x["order_count"] for x in expected["rows"]
    ]
    # the chart: two metrics of different scales, one line each on its own y axis
    chart = page.locator("#chart")
    assert chart.get_attribute("data-layout") == "dual"
    assert page.locator("#chart svg g.mark-line").count() == 2
    texts = page.locator("#chart svg text").evaluate_all("ts => ts.map(t => t.textContent)")
    assert "revenue, order_count by month" in texts and "metric_time (month)" in texts
    sql = page.inner_text("#sql")
    assert "SUM(orders.amount)" in sql and len(sql.splitlines()) > 5  # pretty-printed
    # tooltips: hovering a point shows its month and formatted values
    page.locator("#chart svg g.mark-symbol path").first.hover()
    page.wait_for_selector("#vg-tooltip-element.visible", timeout=5000)
    tip = page.inner_text("#vg-tooltip-element")
    first = expected["rows"][0]
    assert "metric_time (month)" in tip and "Jan 2024" in tip  # the grain's format
    assert f"{first['revenue']:,.2f}" in tip  # the metric's number format
    # the screenshot: the page and the chart are not blank
    image = pytest.importorskip("PIL.Image")
    shot = image.open(io.BytesIO(page.locator("#chart").screenshot())).convert("RGB")
    colours = shot.getcolors(maxcolors=1 << 20) or []
    assert shot.size[0] > 600 and len(colours) > 30
    whole = image.open(io.BytesIO(page.screenshot(full_page=True))).convert("RGB")
    assert len(whole.getcolors(maxcolors=1 << 20) or []) > 50
    # downloads: CSV and Parquet of the same query
    with page.expect_download() as info:
        page.click("#download-csv")
    got = list(csv.DictReader(io.StringIO(Path(info.value.path()).read_text())))
    assert [decimal.Decimal(r["revenue"]) for r in got] == [x["revenue"] for x in expected["rows"]]
    with page.expect_download() as info:
        page.click("#download-parquet")
    assert info.value.suggested_filename.endswith(".parquet")
    table = pq.read_table(info.value.path())
    assert table.column("revenue").to_pylist() == [x["revenue"] for x in expected["rows"]]
    # the URL holds the query: a new tab opens it and runs it
    url = page.url
    shared = json.loads(urllib.parse.unquote(url.split("#q=", 1)[1]))
    assert shared["metrics"] == ["revenue", "order_count"] and shared["group_by"] == [
        "metric_time:month"
    ]
    p.close()
    other = Page(browser, url)
    other.page.wait_for_selector("body[data-state=done]", timeout=WAIT)
    assert other.table() == (head, rows)
    assert other.page.locator("#grain").input_value() == "month"
    other.close()


def test_line_per_channel_and_formatted_doubles(
    browser: Any, server: Server, engine: Engine, shop_db: Path
) -> None:
    q = {
        "metrics": ["close_rate"],
        "group_by": ["orders.channel", "metric_time:quarter"],
        "time_range": YEAR_2024,
    }
    p = Page(browser, server.url + "/#q=" + urllib.parse.quote(json.dumps(q)))
    page = p.page
    page.wait_for_selector("body[data-state=done]", timeout=WAIT)
    assert page.locator("#chart").get_attribute("data-series") == "4"
    assert page.locator("#chart svg g.mark-line").count() == 4  # one line per channel
    expected = engine.execute(q, db_path=shop_db)
    head, rows = p.table()
    col = head.index("close_rate")
    for shown, want in zip(rows, expected["rows"], strict=True):
        text = shown[col]
        assert len(text.replace("-", "").replace(".", "").lstrip("0")) <= 6, text
        assert float(text) == pytest.approx(want["close_rate"], rel=1e-5)
    # the page's formatter on the edges: exact decimal strings keep every digit
    cases = [
        [-0.32430827914865223, ",.6~r", "-0.324308"],
        ["12345678901234567890.1", ",.2f", "12,345,678,901,234,567,890.10"],
        [1234.5, ",.2f", "1,234.50"],
        ["-98765432109876543210", ",d", "-98,765,432,109,876,543,210"],
        [1234567, ",d", "1,234,567"],
        [0.1 + 0.2, None, "0.3"],
        [None, ",d", "NULL"],
    ]
    got = page.evaluate(
        "cs => cs.map(([v, f]) => window.dosiFormat.formatValue(v, f ?? undefined))", cases
    )
    assert got == [c[2] for c in cases]
    p.close()


def test_error_clears_results_and_offers_the_suggested_retry(
    browser: Any, server: Server, engine: Engine, shop_db: Path
) -> None:
    p = Page(browser, server.url + "/")
    page = p.page
    p.pick("metrics", "revenue")
    p.pick("dimensions", "orders.channel")
    p.run()
    assert page.locator("#result tbody tr").count() == 4
    # a window metric without a time grain: the structured error, nothing stale beside it
    p.pick("metrics", "revenue_rolling_3m")
    p.run("error")
    error = page.inner_text("#error")
    assert "[time_axis_not_grouped]" in error and "hint:" in error
    assert page.locator("#result tr").count() == 0
    assert page.locator("#chart *").count() == 0 and page.inner_text("#sql") == ""
    assert page.locator("#download-csv").is_disabled()
    # one click runs the server's suggestion, and the controls show it
    page.evaluate("document.body.dataset.state = ''")
    page.click("#retry")
    page.wait_for_selector("body[data-state=done]", timeout=WAIT)
    assert page.locator("#error").is_hidden()
    assert page.locator("#grain").input_value() == "month"
    retry = {"metrics": ["revenue_rolling_3m"], "group_by": ["orders.channel", "metric_time:month"]}
    expected = engine.execute(retry, db_path=shop_db)
    _, rows = p.table()
    assert len(rows) == expected["row_count"] > 0
    p.close(answered="400")


def test_token_in_the_field_only(browser: Any, launch: Any) -> None:
    """A server with a token: the catalog waits for it; the token rides every request
    (downloads too) but never reaches the URL or the browser's storage."""
    server = launch(SHOP_MODEL, "--token", "s3cret-i26")
    page = browser.new_page(accept_downloads=True)
    page.goto(server.url + "/")
    page.wait_for_selector("#error:not([hidden])", timeout=WAIT)
    assert "[unauthorized]" in page.inner_text("#error")
    page.fill("#token", "s3cret-i26")
    page.press("#token", "Tab")  # the change event loads the catalog
    page.wait_for_selector("body[data-catalog=loaded]", timeout=WAIT)
    assert page.locator("#error").is_hidden()
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_selector("body[data-state=done]", timeout=WAIT)
    with page.expect_download() as info:
        page.click("#download-csv")
    assert (
        Path(info.value.path())
        .read_text()
        .startswith(page.locator("#result th").first.inner_text())
    )
    assert "s3cret" not in page.url
    stored = page.evaluate("JSON.stringify([{...localStorage}, {...sessionStorage}])")
    assert "s3cret" not in stored
    page.close()
