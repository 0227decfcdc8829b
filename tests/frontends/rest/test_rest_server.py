"""REST API on a real `dosi serve` process: every endpoint against the Python API, the error
contract, formats, token, size limit, concurrency, reload and the access log (SURF-REST-01..03).
"""

from __future__ import annotations

import csv
import decimal
import io
import json
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pytest
from enginekit import (
    SHOP_MODEL,
    SLOW_MODEL,
    dataset,
    field,
    json_rows,
    metric,
    model_doc,
    to_yaml,
)
from servekit import Server, start_server

from dosi import Engine
from dosi.errors import ExecuteError

Q = {
    "metrics": ["revenue", "order_count", "revenue_mom"],
    "group_by": ["metric_time:month", "orders.channel"],
    "time_range": {"start": "2024-01-01", "end": "2024-07-01"},
    "order_by": [{"key": "metric_time__month"}, {"key": "orders.channel"}],
}
SELECT = {
    "from": "orders",
    "fields": ["orders.order_id", "orders.amount", "customers.segment"],
    "where_sql": "orders.amount > 100",
    "order_by": [{"key": "amount", "desc": True}],
    "limit": 5,
}
ATTR = {
    "metric": "revenue",
    "current": {"start": "2024-03-01", "end": "2024-04-01"},
    "baseline": {"start": "2024-01-01", "end": "2024-02-01"},
    "dimensions": ["orders.channel", "customers.segment"],
}
CONTRACT = ("code", "message", "candidates", "hint", "suggested_retry")


def _contract(body: dict[str, Any], code: str) -> None:
    for key in CONTRACT:
        assert key in body, (key, body)
    assert body["code"] == code, body


def test_catalog_endpoints_match_the_python_api(server: Server, engine: Engine) -> None:
    with server.client() as c:
        assert c.get("/v1/metrics").json() == engine.metrics()
        assert c.get("/v1/metrics/revenue_mom").json() == engine.metric("revenue_mom")
        assert c.get("/v1/dimensions").json() == engine.dimensions()
        assert c.get(
            "/v1/dimensions", params={"metric": "refund_total"}
        ).json() == engine.dimensions("refund_total")
        assert c.get("/v1/datasets").json() == engine.datasets()
        assert c.get("/v1/datasets/orders").json() == engine.dataset("orders")
        assert c.get("/v1/lineage", params={"metric": "revenue"}).json() == engine.lineage(
            "revenue"
        )
        caps = c.get("/v1/capabilities").json()
    assert caps["datus_ext_version"] == caps["version"] and caps["params"] is True
    assert caps["history"] and caps["impacts"]
    names = [m["name"] for m in engine.metrics()]
    assert names and all("attributable" in m for m in engine.metrics())


def test_query_json_csv_and_arrow(server: Server, engine: Engine, shop_db: Path) -> None:
    expected = engine.execute(Q, db_path=shop_db)
    with server.client() as c:
        dense = {  # the query key `densify` in the body (issue 22): every day of January
            "metrics": ["order_count"],
            "group_by": ["metric_time:day"],
            "where_sql": "orders.amount > 900",
            "time_range": {"start": "2025-01-01", "end": "2025-02-01"},
            "densify": "time",
        }
        assert len(c.post("/v1/query", json=dense).json()["rows"]) == 31
        r = c.post("/v1/query", json=Q)
        assert r.status_code == 200
        body = r.json()
        assert body["rows"] == json_rows(expected)
        assert body["columns"] == expected["columns"]
        assert body["outputs"] == expected["outputs"]
        assert isinstance(body["rows"][0]["revenue"], float)
        r = c.post("/v1/query", json=Q, headers={"Accept": "text/csv"})
        assert r.headers["content-type"].startswith("text/csv")
        rows = list(csv.DictReader(io.StringIO(r.text)))
        assert [decimal.Decimal(x["revenue"]) for x in rows] == [
            x["revenue"] for x in expected["rows"]
        ]  # CSV carries the exact digits
        r = c.post("/v1/query", json=Q, headers={"Accept": "application/vnd.apache.arrow.stream"})
        table = pa.ipc.open_stream(r.content).read_all()
    assert table.equals(expected.arrow)
    meta = table.schema.field("revenue").metadata
    assert meta[b"dosi.metric"] == b"revenue" and meta[b"dosi.params"] == b"{}"


def test_compile_explain_select_attribute_validate(
    server: Server, engine: Engine, shop_db: Path
) -> None:
    with server.client() as c:
        assert c.post("/v1/compile", json=Q).json() == engine.compile(Q)
        pg = c.post("/v1/compile", json=Q, params={"dialect": "postgres", "pretty": "true"}).json()
        assert pg == engine.compile(Q, "postgres", pretty=True)
        ex = c.post("/v1/explain", json=Q).json()
        assert ex["plan"] == engine.explain(Q) and ex["outputs"] == engine.compile(Q)["outputs"]
        sel = c.post("/v1/select", json=SELECT).json()
        assert sel["rows"] == json_rows(engine.select(SELECT, db_path=shop_db))
        att = c.post("/v1/attribute", json=ATTR).json()
        assert att == json.loads(json.dumps(engine.attribute(ATTR, db_path=shop_db)))
        assert att["total_change"]["current_value"] > 0
        good = c.post("/v1/validate", json={"model": SHOP_MODEL.read_text()}).json()
        assert good["valid"] is True
        bad = c.post("/v1/validate", json={"model": "version: 0.2.0.dev0\n"}).json()
        assert bad["valid"] is False and bad["issues"]


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "code"),
    [
        ("post", "/v1/query", {"metrics": ["revenu"]}, 400, "unknown_metric"),
        (
            "post",
            "/v1/query",
            {"metrics": ["revenue"], "group_by": ["orders.chanel"]},
            400,
            "unknown_dimension",
        ),
        ("post", "/v1/query", {"metrics": []}, 400, "empty_query"),
        ("post", "/v1/query", {"metrics": ["revenue"], "nope": 1}, 400, "unknown_query_key"),
        ("post", "/v1/query", [1, 2], 400, "invalid_query"),
        (
            "post",
            "/v1/compile",
            {"metrics": ["revenue"], "group_by": ["order_items.quantity"]},
            400,
            "fan_out_risk",
        ),
        (
            "post",
            "/v1/select",
            {"from": "orders", "fields": ["order_items.quantity"]},
            400,
            "detail_fanout",
        ),
        ("post", "/v1/attribute", {"metric": "revenue"}, 400, "invalid_query"),
        ("post", "/v1/validate", {"yaml": "x"}, 400, "invalid_request"),
        ("get", "/v1/metrics/nope", None, 404, "unknown_metric"),
        ("get", "/v1/datasets/nope", None, 404, "unknown_dataset"),
        ("get", "/v1/nothing-here", None, 404, "not_found"),
        ("get", "/v1/query", None, 405, "method_not_allowed"),
    ],
)
def test_errors_follow_the_contract(
    server: Server, method: str, path: str, body: Any, status: int, code: str
) -> None:
    with server.client() as c:
        r = c.post(path, json=body) if method == "post" else c.get(path)
    assert r.status_code == status, r.text
    _contract(r.json(), code)


def test_unknown_metric_error_carries_candidates_and_retry(server: Server) -> None:
    with server.client() as c:
        body = c.post("/v1/query", json={"metrics": ["revenu"]}).json()
    assert body["candidates"][0] == "revenue"
    assert body["suggested_retry"] == {"metrics": ["revenue"]}


def test_bad_json_empty_body_and_oversize(server: Server) -> None:
    with server.client() as c:
        r = c.post(
            "/v1/query", content=b'{"metrics": [', headers={"content-type": "application/json"}
        )
        assert r.status_code == 400
        _contract(r.json(), "invalid_json")
        r = c.post("/v1/query", content=b"")
        assert r.status_code == 400
        _contract(r.json(), "invalid_json")
        big = {"metrics": ["revenue"], "where_sql": "orders.status = '" + "x" * 300000 + "'"}
        r = c.post("/v1/query", json=big)
        assert r.status_code == 413
        _contract(r.json(), "request_too_large")

        def chunks() -> Any:  # no Content-Length: the limit holds on the streamed body too
            for _ in range(300):
                yield b" " * 1000
            yield b'{"metrics": ["revenue"]}'

        r = c.post("/v1/query", content=chunks())
        assert r.status_code == 413


def test_concurrent_clients_get_the_same_answers(
    server: Server, engine: Engine, shop_db: Path
) -> None:
    queries = [
        {"metrics": ["revenue"], "group_by": ["orders.channel"]},
        {"metrics": ["order_count", "refund_total"], "group_by": ["metric_time:quarter"]},
        {"metrics": ["avg_order_value"], "group_by": ["customers.segment"]},
    ]
    expected = [json_rows(engine.execute(q, db_path=shop_db)) for q in queries]

    def one(i: int) -> bool:
        with server.client() as c:
            r = c.post("/v1/query", json=queries[i % 3])
            return r.status_code == 200 and r.json()["rows"] == expected[i % 3]

    with ThreadPoolExecutor(max_workers=12) as pool:
        assert all(pool.map(one, range(48)))


def test_bearer_token(launch: Any) -> None:
    s = launch(env={"DOSI_TOKEN": "s3cret"})
    with s.client() as c:
        r = c.get("/v1/metrics")
        assert r.status_code == 401
        _contract(r.json(), "unauthorized")
        assert r.headers["www-authenticate"] == "Bearer"
        assert c.get("/v1/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
        ok = c.post(
            "/v1/query", json={"metrics": ["revenue"]}, headers={"Authorization": "Bearer s3cret"}
        )
        assert ok.status_code == 200
        assert c.get("/").status_code == 200  # the explorer page itself is public


def test_model_reload_on_file_change(launch: Any, model_copy: Path) -> None:
    s = launch(model_copy)
    text = model_copy.read_text()
    with s.client() as c:
        assert "revenue_x2" not in [m["name"] for m in c.get("/v1/metrics").json()]
        added = text.replace(
            "    metrics:\n",
            "    metrics:\n      - name: revenue_x2\n        expression:\n          dialects:\n"
            "            - dialect: ANSI_SQL\n              expression: SUM(orders.amount) * 2\n",
            1,
        )
        assert added != text
        model_copy.write_text(added)
        deadline = time.monotonic() + 10
        names: list[str] = []
        while time.monotonic() < deadline:
            names = [m["name"] for m in c.get("/v1/metrics").json()]
            if "revenue_x2" in names:
                break
            time.sleep(0.2)
        assert "revenue_x2" in names
        r = c.post("/v1/query", json={"metrics": ["revenue", "revenue_x2"]}).json()
        assert r["rows"][0]["revenue_x2"] == pytest.approx(2 * r["rows"][0]["revenue"])
        model_copy.write_text("this: [is not, a model")  # a broken edit keeps the old model
        time.sleep(1.0)
        assert c.post("/v1/query", json={"metrics": ["revenue_x2"]}).status_code == 200
        public = c.get("/healthz")
        assert public.json() == {
            "ok": True,
            "reloads": public.json()["reloads"],
            "last_reload_failed": True,
            "connections": {"db": {"type": "duckdb", "state": "ok", "reopens": 0}},
        }
        detail = c.get("/v1/health").json()["last_reload_error"]
        assert detail is not None and str(model_copy.parent) not in json.dumps(detail)


def test_openapi_and_access_log(server: Server) -> None:
    with server.client() as c:
        doc = c.get("/v1/openapi.json").json()
        c.get("/v1/metrics", headers={"x-request-id": "abc123"})
    for path in (
        "/v1/query",
        "/v1/compile",
        "/v1/explain",
        "/v1/select",
        "/v1/attribute",
        "/v1/validate",
        "/v1/capabilities",
        "/v1/metrics/{name}",
        "/v1/dimensions",
        "/v1/datasets",
    ):
        assert path in doc["paths"], path
    assert doc["paths"]["/v1/query"]["post"]["requestBody"]["content"]["application/json"]
    time.sleep(0.2)
    lines = [json.loads(x) for x in server.log_text().splitlines() if x.startswith("{")]
    hit = [x for x in lines if x["request_id"] == "abc123"]
    assert hit and hit[0]["path"] == "/v1/metrics" and hit[0]["status"] == 200
    assert {"ts", "method", "ms", "client"} <= set(hit[0])


def test_timeout_and_client_disconnect_cancel_the_statement(launch: Any, tmp_path: Path) -> None:
    model = tmp_path / "slow.yaml"
    model.write_text(SLOW_MODEL)
    s = launch(model, "--timeout", "0.5")
    with s.client() as c:
        r = c.post("/v1/query", json={"metrics": ["total"]})
    assert r.status_code == 504
    _contract(r.json(), "timeout")

    s2 = launch(model, "--timeout", "600")
    started = time.monotonic()
    with s2.client(timeout=0.5) as c, pytest.raises(httpx.TimeoutException):
        c.post(
            "/v1/query",
            json={"metrics": ["total"], "group_by": ["big.k"]},
            headers={"x-request-id": "gone"},
        )
    deadline = time.monotonic() + 20
    logged: list[dict[str, Any]] = []
    while time.monotonic() < deadline and not logged:
        lines = [json.loads(x) for x in s2.log_text().splitlines() if x.startswith("{")]
        logged = [x for x in lines if x["request_id"] == "gone"]
        time.sleep(0.1)
    assert logged, s2.log_text()
    assert logged[0]["status"] == 499  # cancelled, not left running for minutes
    assert time.monotonic() - started < 20


def test_connections_file_names_the_database(
    launch: Any, tmp_path: Path, shop_db: Path, engine: Engine
) -> None:
    """`dosi serve --connections FILE` reads profiles through the connections module."""
    conns = tmp_path / "connections.yml"
    conns.write_text(f"shop:\n  type: duckdb\n  uri: {shop_db}\n")
    s = launch(SHOP_MODEL, "--connections", str(conns), db=False)
    q = {"metrics": ["refund_total"], "group_by": ["metric_time:year"]}
    with s.client() as c:
        r = c.post("/v1/query", json=q)
    assert r.status_code == 200, r.text
    assert r.json()["rows"] == json_rows(engine.execute(q, db_path=shop_db))


def test_reload_drops_no_request(launch: Any, model_copy: Path) -> None:
    """Requests in flight while the model file is rewritten all succeed, with the same rows."""
    s = launch(model_copy)
    q = {"metrics": ["revenue"], "group_by": ["orders.channel"]}
    with s.client() as c:
        expected = c.post("/v1/query", json=q).json()["rows"]
    stop_at = time.monotonic() + 4

    def hammer(_: int) -> list[int]:
        codes = []
        with s.client() as c:
            while time.monotonic() < stop_at:
                r = c.post("/v1/query", json=q)
                codes.append(r.status_code if r.json().get("rows") == expected else -1)
        return codes

    text = model_copy.read_text()
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = [pool.submit(hammer, i) for i in range(4)]
        for i in range(4):
            time.sleep(0.7)
            model_copy.write_text(text + f"\n# edit {i}\n")
        codes = [code for f in futures for code in f.result()]
    assert codes and set(codes) == {200}
    with s.client() as c:
        assert c.get("/healthz").json()["reloads"] >= 2


def test_a_slow_query_does_not_hold_up_a_fast_one(launch: Any, tmp_path: Path) -> None:
    """Concurrent requests run on separate connections of the pool."""
    model = tmp_path / "mixed.yaml"
    model.write_text(
        to_yaml(
            model_doc(
                [
                    dataset(
                        "big",
                        [field("x", datatype="Integer")],
                        source="SELECT range AS x FROM range(20000000000)",
                    ),
                    dataset(
                        "small",
                        [field("y", datatype="Integer")],
                        source="SELECT range AS y FROM range(10)",
                    ),
                ],
                metrics=[
                    metric("slow_total", "SUM(big.x % 13)"),
                    metric("small_total", "SUM(small.y)"),
                ],
            )
        )
    )
    s = launch(model, "--timeout", "600")

    def slow() -> int:
        with s.client(timeout=4) as c:
            try:
                return c.post("/v1/query", json={"metrics": ["slow_total"]}).status_code
            except httpx.TimeoutException:
                return -1

    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(slow)
        time.sleep(0.5)
        started = time.monotonic()
        with s.client() as c:
            fast = c.post("/v1/query", json={"metrics": ["small_total"]})
        took = time.monotonic() - started
        assert fast.status_code == 200 and fast.json()["rows"] == [{"small_total": 45}]
        assert took < 3, took
        assert pending.result() == -1  # the slow one was still running (then cancelled)


def test_query_accepts_context_filter(server: Server, engine: Engine, shop_db: Path) -> None:
    """CORE-Q-10: `context_filter` is a query key on REST as in Python."""
    q = {
        "metrics": ["customer_count"],
        "group_by": ["orders.cohort_month"],
        "context_filter": "orders.channel = 'store'",
    }
    with server.client() as c:
        r = c.post("/v1/query", json=q)
    assert r.status_code == 200, r.text
    assert r.json()["rows"] == json_rows(engine.execute(q, db_path=shop_db))


RAW_MISTAKES = [
    ("deep", b'{"metrics": ' + b"[" * 5000 + b"]" * 5000 + b"}", 400, "invalid_json"),
    ("deep_objects", b'{"a":' * 200 + b"1" + b"}" * 200, 400, "invalid_json"),
    ("surrogate", b'{"metrics": ["\\ud800"]}', 400, "invalid_json"),
    ("surrogate_key", b'{"\\udfff": 1}', 400, "invalid_json"),
    ("huge_int", b'{"metrics": ["revenue"], "limit": ' + b"9" * 5000 + b"}", 400, "invalid_json"),
    ("not_utf8", b'{"metrics": ["\xff"]}', 400, "invalid_json"),
    (
        "engine_rejects",
        b'{"metrics": ["revenue"], "where_sql": '
        b"\"substring(orders.channel, 1, 9223372036854775807) = 'web'\"}",
        422,
        "value_rejected",
    ),
    (
        "bad_cast",
        b'{"metrics": ["revenue"], "where_sql": "CAST(orders.channel AS INTEGER) = 1"}',
        422,
        "value_rejected",
    ),
]


@pytest.mark.parametrize(
    ("name", "raw", "status", "code"), RAW_MISTAKES, ids=[m[0] for m in RAW_MISTAKES]
)
def test_caller_mistakes_in_raw_bodies_are_4xx(
    server: Server, name: str, raw: bytes, status: int, code: str
) -> None:
    """Issue 29 item 3: deep JSON, lone surrogates, giant integers and the database's refusal
    of an allow-listed value are structured 4xx errors with a hint, and no traceback is logged."""
    before = len(server.log_text())
    with server.client() as c:
        r = c.post("/v1/query", content=raw, headers={"content-type": "application/json"})
        assert r.status_code == status, r.text
        body = r.json()
        _contract(body, code)
        assert body["hint"], body
        assert c.post("/v1/sql", content=raw).status_code < 500
    time.sleep(0.1)
    assert "Traceback" not in server.log_text()[before:]


def test_value_rejected_is_a_structured_error_of_the_python_api(
    engine: Engine, shop_db: Path
) -> None:
    """The same refusal from `Engine.execute` is ExecuteError `value_rejected` (no raw DuckDB
    exception), with the statement in `detail.sql`."""
    with pytest.raises(ExecuteError) as info:
        engine.execute(
            {"metrics": ["revenue"], "where_sql": "CAST(orders.channel AS INTEGER) = 1"},
            db_path=shop_db,
        )
    assert info.value.code == "value_rejected"
    assert info.value.detail["duckdb_error"] == "ConversionException"
    assert "CAST" in info.value.detail["sql"]


def test_host_header_allow_list(launch: Any) -> None:
    """Issue 29 item 4: bound to loopback, only loopback Host names are answered (DNS
    rebinding); `--allow-host` adds one."""
    s = launch(SHOP_MODEL, "--allow-host", "dosi.internal")
    port = s.url.rsplit(":", 1)[1]
    with s.client() as c:
        for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.evil.example", ""):
            r = c.get("/v1/metrics", headers={"Host": host})
            assert r.status_code == 421, (host, r.text)
            _contract(r.json(), "host_not_allowed")
        assert (
            c.post(
                "/v1/query",
                content=b'{"metrics": ["revenue"]}',
                headers={"Host": "evil.example", "content-type": "text/plain"},
            ).status_code
            == 421
        )
        for host in (f"localhost:{port}", f"127.0.0.1:{port}", "dosi.internal", f"[::1]:{port}"):
            assert c.get("/v1/metrics", headers={"Host": host}).status_code == 200, host


@pytest.mark.parametrize(
    ("token", "says"),
    [("", "empty"), ("   ", "empty"), ("two words", "space"), ("\udcff", "UTF-8")],
    ids=["empty", "blank", "space", "not_utf8"],
)
def test_unusable_token_is_a_start_up_error(
    shop_db: Path, tmp_path: Path, token: str, says: str
) -> None:
    """An empty or unusable DOSI_TOKEN stops `dosi serve` with a message, never serving
    without authentication."""
    with pytest.raises(RuntimeError) as info:
        start_server(SHOP_MODEL, shop_db, tmp_path, env={"DOSI_TOKEN": token})
    assert says in str(info.value) and "DOSI_TOKEN" in str(info.value)
    assert "Traceback" not in str(info.value)


def test_utf8_token_works(launch: Any) -> None:
    s = launch(env={"DOSI_TOKEN": "pässwörd-✓"})
    with s.client() as c:
        good = {"Authorization": "Bearer pässwörd-✓".encode()}
        assert c.get("/v1/metrics", headers=good).status_code == 200
        bad = {"Authorization": b"Bearer passwort"}
        assert c.get("/v1/metrics", headers=bad).status_code == 401
        assert c.get("/v1/health").status_code == 401  # the detailed health is behind it
        assert c.get("/v1/health", headers=good).json()["ok"] is True
        health = c.get("/healthz")  # the public one needs no token and says little
        assert health.status_code == 200
        assert set(health.json()) == {"ok", "reloads", "last_reload_failed", "connections"}


def test_page_headers_and_no_cdn_docs(server: Server) -> None:
    """The page sends CSP, frame and referrer headers; no page loads assets from a CDN."""
    with server.client() as c:
        page = c.get("/")
        csp = page.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
        assert page.headers["x-frame-options"] == "DENY"
        assert page.headers["referrer-policy"] == "no-referrer"
        assert "http" not in page.text.replace('xmlns="http://www.w3.org/2000/svg"', "")
        js = c.get("/explorer.js").text
        assert "localStorage.setItem" not in js and "localStorage.getItem" not in js
        assert c.get("/v1/docs").status_code == 404
        assert c.get("/v1/openapi.json").status_code == 200


def test_slow_client_is_cut_off_and_connections_are_bounded(launch: Any) -> None:
    """Issue 29 item 4: a client that never finishes its request head is closed after
    `--header-timeout`, and connections above `--max-connections` get 503, while a normal
    request still gets its answer."""
    s = launch(SHOP_MODEL, "--header-timeout", "3", "--max-connections", "5")
    host, port = s.url.removeprefix("http://").rsplit(":", 1)
    slow = [socket.create_connection((host, int(port))) for _ in range(3)]
    for sock in slow:
        sock.sendall(b"GET /v1/metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # no blank line
    with s.client() as c:
        assert c.get("/v1/metrics").status_code == 200
        extra = [socket.create_connection((host, int(port))) for _ in range(3)]
        time.sleep(0.3)  # the server has accepted them
        assert c.get("/healthz").status_code == 503
        for sock in extra:
            sock.close()
    started = time.monotonic()
    for sock in slow:
        sock.settimeout(10)
        assert sock.recv(100) == b""  # closed by the server
        sock.close()
    assert time.monotonic() - started < 8
    with s.client() as c:
        assert c.get("/v1/metrics").status_code == 200
    assert "Traceback" not in s.log_text()


def test_a_trickled_body_is_408(launch: Any) -> None:
    """A body that does not arrive within `--body-timeout` is 408 `request_timeout`."""
    s = launch(SHOP_MODEL, "--body-timeout", "1")
    host, port = s.url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(
            b"POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
        )
        sock.settimeout(10)
        answer = ""
        while "request_timeout" not in answer:
            part = sock.recv(4096).decode()
            if not part:
                break
            answer += part
    assert answer.startswith("HTTP/1.1 408"), answer
    assert '"code":"request_timeout"' in answer


def test_issue28_4_result_cache_counts_in_stats(
    server: Server, engine: Engine, shop_db: Path
) -> None:
    """Issue 28 item 4: a repeated query is a cache hit with the same rows; `"cache": false`
    and `Cache-Control: no-cache` bypass it; GET /v1/stats counts hits, misses, bypasses."""
    q = {"metrics": ["refund_total"], "group_by": ["metric_time:quarter"]}
    expected = json_rows(engine.execute(q, db_path=shop_db, cache=False))
    with server.client() as c:
        before = c.get("/v1/stats").json()["result_cache"]
        assert c.post("/v1/query", json=q).json()["rows"] == expected
        assert c.post("/v1/query", json=q).json()["rows"] == expected
        assert c.post("/v1/query", json={**q, "cache": False}).json()["rows"] == expected
        nocache = {"Cache-Control": "no-cache"}
        assert c.post("/v1/query", json=q, headers=nocache).json()["rows"] == expected
        after = c.get("/v1/stats").json()["result_cache"]
    assert after["hits"] - before["hits"] == 1
    assert after["misses"] - before["misses"] == 1
    assert after["bypasses"] - before["bypasses"] == 2
    assert {"evictions", "entries", "bytes", "max_entries", "max_bytes"} <= set(after)


def test_issue28_3_rollups_over_rest(
    launch: Any, model_copy: Path, engine: Engine, shop_db: Path
) -> None:
    """Issue 28 item 3: GET /v1/rollups and POST /v1/rollups/{build,refresh,drop}; a built
    rollup serves /v1/query with the fact table's rows."""
    (model_copy.parent / "model.rollups.yaml").write_text(
        to_yaml(
            {
                "rollups": [
                    {
                        "name": "orders_monthly",
                        "dataset": "orders",
                        "time": "order_date",
                        "grain": "month",
                        "dimensions": ["channel"],
                        "measures": ["revenue", "order_count"],
                    }
                ]
            }
        )
    )
    s = launch(model_copy)
    q = {"metrics": ["revenue", "order_count"], "group_by": ["metric_time:quarter"]}
    with s.client() as c:
        state = c.get("/v1/rollups").json()["rollups"]
        assert [(r["name"], r["state"]) for r in state] == [("orders_monthly", "missing")]
        built = c.post("/v1/rollups/build", json={}).json()
        assert built["built"] == ["orders_monthly"]
        assert built["rollups"][0]["state"] == "fresh"
        r = c.post("/v1/query", json={**q, "cache": False}).json()
        assert "dosi_rollups" in r["sql"]
        assert r["rows"] == json_rows(engine.execute(q, db_path=shop_db, cache=False))
        assert (
            c.post("/v1/rollups/refresh", json={"names": ["orders_monthly"]}).json()["built"] == []
        )
        dropped = c.post("/v1/rollups/drop", json={}).json()
        assert dropped["rollups"][0]["state"] == "missing"
        assert "dosi_rollups" not in c.post("/v1/query", json={**q, "cache": False}).json()["sql"]
        bad = c.post("/v1/rollups/rebuild", json={})
        assert bad.status_code == 404 and bad.json()["candidates"] == ["build", "refresh", "drop"]
        assert c.post("/v1/rollups/build", json={"names": "x"}).status_code == 400
        unknown = c.post("/v1/rollups/build", json={"names": ["orders_m"]})
        assert unknown.status_code == 400 and "orders_monthly" in unknown.json()["candidates"]
