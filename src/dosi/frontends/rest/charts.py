"""What the explorer page asks of a query result beyond its rows: the SQL pretty-printed
(`?pretty=true`, rendered again by the engine in the result's dialect), the chart spec and the
number format of each metric column (`?chart=true`, the spec every surface draws:
`dosi.frontends.charts.spec`), and `/v1/chart`, the spec alone or rendered (`?format=svg|png`,
the `charts` extra). Also the vendored chart scripts the page loads (`web/vendor`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import FileResponse, JSONResponse, Response

from dosi.engine import Engine, QueryResult
from dosi.frontends.charts.columns import columns_of
from dosi.frontends.charts.spec import chart_spec
from dosi.frontends.contract import OsiErrorBody, error_body, json_safe
from dosi.frontends.extras import load_extra

VENDOR_DIR = Path(__file__).resolve().parent.parent / "web" / "vendor"
RENDERER = "dosi.frontends.charts.render"
CHART_FORMATS = ("vega-lite", "svg", "png")


def _flag(request: Request, name: str) -> bool:
    return request.query_params.get(name, "").lower() in ("1", "true", "yes")


def descriptions(engine: Engine, result: QueryResult) -> dict[str, str]:
    """Each charted metric's description from the model (the chart's subtitle)."""
    names = {o.get("metric") for o in result.get("outputs") or []}
    return {
        m["name"]: m["description"]
        for m in engine.metrics()
        if m["name"] in names and m.get("description")
    }


def enrich(
    request: Request,
    engine: Engine,
    query: Any,
    result: QueryResult,
    db_path: str | None = None,
) -> QueryResult:
    """`?pretty=true`: the SQL as the engine renders it pretty (planned for the database the
    query ran on, `db_path`); `?chart=true`: the chart spec (null when there is nothing to
    draw) and each metric column's number format."""
    if _flag(request, "pretty") and "dialect" in result:
        result["sql"] = engine.compile(query, result["dialect"], True, db_path=db_path)["sql"]
    if _flag(request, "chart"):
        result["formats"] = columns_of(result).formats
        try:
            result["chart"] = chart_spec(result, descriptions=descriptions(engine, result))
        except ValueError:
            result["chart"] = None
    return result


def chart_body(engine: Engine, result: QueryResult) -> dict[str, Any]:
    """The spec of `/v1/chart`; a result with nothing to draw is a structured error."""
    try:
        return chart_spec(result, descriptions=descriptions(engine, result))
    except ValueError as exc:
        raise OsiErrorBody(
            400,
            error_body("nothing_to_chart", str(exc), hint="ask for at least one metric"),
        ) from None


def chart_format(request: Request) -> str:
    fmt = request.query_params.get("format") or "vega-lite"
    if fmt not in CHART_FORMATS:
        raise OsiErrorBody(
            400,
            error_body(
                "unsupported_format",
                f"chart format `{fmt}` is not one of {', '.join(CHART_FORMATS)}",
                candidates=list(CHART_FORMATS),
            ),
        )
    return fmt


def chart_response(fmt: str, spec: dict[str, Any]) -> Response:
    if fmt == "vega-lite":
        return JSONResponse(json_safe(spec))
    try:
        render = load_extra(RENDERER)
    except ImportError:
        body = error_body(
            "missing_extra",
            f"a {fmt} chart needs vl-convert on the server",
            hint="pip install 'dosi[charts]' where `dosi serve` runs, or ask for the spec",
        )
        return JSONResponse(body, status_code=501)
    if fmt == "svg":
        return Response(render.to_svg(spec), media_type="image/svg+xml")
    return Response(render.to_png(spec), media_type="image/png")


def vendor_file(name: str) -> FileResponse | JSONResponse:
    """One file of `web/vendor` by its exact name (nothing else is reachable)."""
    files = {p.name: p for p in VENDOR_DIR.iterdir() if p.suffix in (".js", ".txt")}
    if name not in files:
        return JSONResponse(error_body("not_found", f"no vendored file `{name}`"), status_code=404)
    media = "text/javascript" if name.endswith(".js") else "text/plain"
    return FileResponse(files[name], media_type=media)
