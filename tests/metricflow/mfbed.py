"""The MetricFlow test bed: MetricFlow's own integration questions, asked of dosi.

MetricFlow's integration tests (vendored under tests/fixtures/metricflow, Apache 2.0) pair a
query (metrics, dbt group-bys, a Jinja where filter, order, limit, time constraint) with a
hand-written `check_query` over fixture tables. The bed imports each semantic manifest with
`dosi import dbt`, loads the fixture tables into DuckDB, translates each query with the
importer's QueryTranslator, runs it on dosi, renders the check query for DuckDB (its Jinja
helpers are re-implemented here, after MetricFlow's DuckDB renderer) and compares the values.

`cases.yaml` (beside the fixtures) lists every case with what it `needs` from dosi; a case
runs (and must pass) once every need is in the file's `met` list. `python tests/metricflow/
mfbed.py` re-runs every case and prints the table for the report (`--write` refreshes the
measured `status` of each entry).
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import gzip
import math
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import duckdb
import jinja2
import yaml
from dbt_semantic_interfaces.type_enums.date_part import DatePart
from dbt_semantic_interfaces.type_enums.time_granularity import TimeGranularity

from dosi.engine import Engine
from dosi.errors import OsiError
from dosi.importers.dbt.convert import convert
from dosi.importers.dbt.manifest import load_manifest
from dosi.importers.dbt.names import DbtNames, item_spelling
from dosi.importers.dbt.queries import QueryTranslator, Translated

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "metricflow"
CASES = ROOT / "cases.yaml"
SCHEMA = "main"
MODELS = {
    "SIMPLE_MODEL": "simple_manifest",
    "SIMPLE_MODEL_NON_DS": "non_sm_manifest",
    "UNPARTITIONED_MULTI_HOP_JOIN_MODEL": "multi_hop_join_manifest",
    "PARTITIONED_MULTI_HOP_JOIN_MODEL": "partitioned_multi_hop_join_manifest",
    "EXTENDED_DATE_MODEL": "extended_date_manifest",
    "SCD_MODEL": "scd_manifest",
}
_TYPES = {
    "TIME": "TIMESTAMP",
    "STRING": "VARCHAR",
    "FLOAT": "DOUBLE",
    "BOOLEAN": "BOOLEAN",
    "INT": "BIGINT",
}

#: import warning code -> the need it puts on every query of that metric
WARNING_NEEDS = {
    "conversion_not_supported": "conversion_metric",
    "semi_additive_not_supported": "semi_additive",
    "percentile_not_supported": "percentile",
    "offset_to_grain_not_supported": "offset_to_grain",
    "custom_granularity_not_supported": "custom_grain_offset",
    "grain_to_date_not_supported": "sub_day_reset",
    "filter_not_carried": "metric_filter",
    "metric_filter_not_carried": "metric_filter_in_metric",
    "cumulative_not_additive": "cumulative_distinct",
    "metric_without_measure": "inline_agg_metric",
    "scd_join_not_carried": "scd_join",
    "filter_not_reachable": "filter_join_path",
}


#: dosi error code on a translated query -> the dosi feature the question needs
ERROR_NEEDS = {
    "ambiguous_join_path": "entity_join_paths",
    "window_reset_too_fine": "period_agg",
    # an offset that no sampling answers at the grain: MetricFlow aggregates each input of a
    # compose to the grain first (offset_finer_than_grain is met by period_value on offsets)
    "window_offset_misaligned": "sampled_compose_member",
    "grain_too_fine": "mixed_grain_metric_time",
    "time_axis_not_grouped": "window_without_time_axis",
    "window_on_date_part": "window_by_date_part",
}


# -- cases ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    """One MetricFlow integration test case."""

    id: str  # "<file stem>/<name>"
    model: str
    spec: Mapping[str, Any]

    @property
    def check_query(self) -> str:
        return str(self.spec["check_query"])


@cache
def mf_cases() -> tuple[Case, ...]:
    out = []
    for path in sorted((ROOT / "test_cases").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if not doc:
                continue
            spec = doc["integration_test"]
            out.append(Case(f"{path.stem}/{spec['name']}", spec["model"], spec))
    return tuple(out)


def bed_entries() -> dict[str, Any]:
    """cases.yaml: {"met": [...], "cases": {id: {"needs": [...], ...}}}."""
    return yaml.safe_load(CASES.read_text())


def runnable(entries: Mapping[str, Any]) -> list[str]:
    """The case ids every need of which is met."""
    met = set(entries.get("met") or ())
    return [cid for cid, e in entries["cases"].items() if set(e.get("needs") or ()) <= met]


# -- data ----------------------------------------------------------------------------------------
def build_database(path: Path) -> Path:
    """Every fixture table (and the day time spine) in one DuckDB file, schema `main`."""
    con = duckdb.connect(str(path))
    try:
        for snap in sorted((ROOT / "source_table_snapshots").rglob("*.yaml")):
            t = yaml.safe_load(snap.read_text())["table_snapshot"]
            cols = [(c["name"], _TYPES[c["type"]]) for c in t["column_definitions"]]
            _load(con, t["table_name"], cols, t["rows"])
        with gzip.open(
            ROOT / "source_table_snapshots" / "time_spine_table" / "mf_time_spine.csv.gz", "rt"
        ) as f:
            reader = csv.reader(f)
            header = next(reader)
            cols = [(h.split(":")[0], _TYPES[h.split(":")[1]]) for h in header]
            _load(con, "mf_time_spine", cols, list(reader))
    finally:
        con.close()
    return path


def _load(
    con: duckdb.DuckDBPyConnection,
    table: str,
    cols: Sequence[tuple[str, str]],
    rows: Sequence[Sequence[Any]],
) -> None:
    defs = ", ".join(f'"{n}" {t}' for n, t in cols)
    con.execute(f'CREATE OR REPLACE TABLE {SCHEMA}."{table}" ({defs})')
    if not rows:
        return
    placeholders = ", ".join("?" for _ in cols)
    casts = ", ".join(f"CAST(v{i} AS {t})" for i, (_, t) in enumerate(cols))
    tmp = f"_load_{table}"
    con.execute(f"CREATE TEMP TABLE {tmp} ({', '.join(f'v{i} VARCHAR' for i in range(len(cols)))})")
    con.executemany(
        f"INSERT INTO {tmp} VALUES ({placeholders})",
        [tuple(None if v is None else str(v) for v in r) for r in rows],
    )
    con.execute(f'INSERT INTO {SCHEMA}."{table}" SELECT {casts} FROM {tmp}')
    con.execute(f"DROP TABLE {tmp}")


# -- the imported models -------------------------------------------------------------------------
@dataclass
class Imported:
    manifest_name: str
    names: DbtNames
    yaml_text: str
    metrics: set[str]
    warnings: dict[str, list[str]]  # metric -> warning codes
    engine: Engine | None = None
    engine_error: str | None = None


@cache
def imported(manifest_name: str) -> Imported:
    return import_path(ROOT / "semantic_manifest_yamls" / manifest_name, manifest_name)


def import_path(path: Path, manifest_name: str) -> Imported:
    """A project imported the way `dosi import dbt` does, with what the bed needs of it."""
    manifest = load_manifest(path, SCHEMA)
    conv = convert(manifest, manifest_name)
    names = DbtNames(manifest)
    text = conv.yaml()
    metrics = {m["name"] for m in conv.plain()["semantic_model"][0].get("metrics", [])}
    warnings: dict[str, list[str]] = {}
    for w in conv.warnings:
        if w.path and w.path.startswith("metric:"):
            warnings.setdefault(w.path[len("metric:") :], []).append(w.code)
    return Imported(manifest_name, names, text, metrics, warnings)


def engine_for(imp: Imported, db: Path) -> Engine:
    if imp.engine is None:
        imp.engine = Engine(
            model_text=imp.yaml_text, connections={"mf": {"type": "duckdb", "uri": str(db)}}
        )
    return imp.engine


# -- one case ------------------------------------------------------------------------------------
@dataclass
class Outcome:
    """What running a case gave: `status` pass / fail / needs / error, and why."""

    case: Case
    status: str
    needs: list[str] = field(default_factory=list)
    detail: str = ""
    query: dict[str, Any] | None = None


def translate(case: Case, imp: Imported) -> Translated:
    spec = case.spec
    helpers = CheckHelpers()
    where = []
    if spec.get("where_filter"):
        where.append(_jinja(str(spec["where_filter"]), helpers.where_globals()))
    tc = spec.get("time_constraint")
    t = QueryTranslator(imp.names, imp.metrics).translate(
        metrics=list(spec.get("metrics") or ()),
        group_by=list(spec.get("group_bys") or ()),
        group_by_objs=list(spec.get("group_by_objs") or ()),
        where=where,
        order_by=list(spec.get("order_bys") or ()),
        limit=spec.get("limit"),
        time_constraint=(str(tc[0]), str(tc[1])) if tc else None,
        min_max_only=bool(spec.get("min_max_only")),
    )
    if spec.get("saved_query_name"):
        t.need("saved_query", "the case runs a saved query by name")
    if spec.get("apply_group_by") is False:
        t.need("no_group_by", "apply_group_by: false")
    for m in spec.get("metrics") or ():
        if m not in imp.metrics:
            for need, code in _root_needs(imp, m, set()):
                t.need(need, f"metric `{m}`: {code}")
    if "metric_not_imported" in t.needs and len(t.needs) > 1:
        t.needs.remove("metric_not_imported")
    return t


def _root_needs(imp: Imported, metric: str, seen: set[str]) -> list[tuple[str, str]]:
    """Why an imported metric is missing: its own warning, or its inputs' (recursively)."""
    if metric in seen:
        return []
    seen.add(metric)
    out = [(WARNING_NEEDS[c], c) for c in imp.warnings.get(metric, ()) if c in WARNING_NEEDS]
    if out:
        return out
    dbt = next((m for m in imp.names.manifest.metrics if m.name == metric), None)
    if dbt is None:
        return []
    tp = dbt.type_params
    inputs = [i.name for i in (tp.metrics or ())]
    inputs += [i.name for i in (tp.numerator, tp.denominator) if i is not None]
    if tp.cumulative_type_params is not None and tp.cumulative_type_params.metric is not None:
        inputs.append(tp.cumulative_type_params.metric.name)
    for name in inputs:
        out += _root_needs(imp, name, seen)
    return out


def run_case(case: Case, db: Path, imp: Imported | None = None) -> Outcome:
    """Ask `case` of dosi (the imported manifest, or `imp`) and compare with its check query."""
    imp = imp or imported(MODELS[case.model])
    t = translate(case, imp)
    if t.needs:
        return Outcome(case, "needs", list(t.needs), "; ".join(t.problems), t.query or None)
    try:
        engine = engine_for(imp, db)
        result = engine.execute(t.query)
    except OsiError as err:
        need = ERROR_NEEDS.get(err.code)
        status = "needs" if need else "error"
        return Outcome(
            case, status, [need] if need else [], f"dosi: [{err.code}] {err.message}", t.query
        )
    actual_cols = _dosi_columns(t, result)
    try:
        expected_cols, expected = check_rows(case, db)
    except duckdb.Error as err:
        return Outcome(case, "error", [], f"check query: {err}", t.query)
    return _compare(case, t, actual_cols, result.arrow.to_pylist(), expected_cols, expected)


def _dosi_columns(t: Translated, result: Mapping[str, Any]) -> list[str]:
    """dosi's result columns renamed to MetricFlow's names (group-bys in order, then
    metrics)."""
    cols = list(result["columns"])
    gb = [item_spelling(g) for g in t.query.get("group_by") or ()]
    if t.query.get("min_max_only"):  # `<column>__min`, `<column>__max` per group-by
        return [
            f"{t.columns.get(gb[i // 2], c)}__{('min', 'max')[i % 2]}" for i, c in enumerate(cols)
        ]
    out = []
    for i, c in enumerate(cols):
        out.append(t.columns.get(gb[i], c) if i < len(gb) else c)
    return out


def _compare(
    case: Case,
    t: Translated,
    acols: list[str],
    arows: list[Mapping[str, Any]],
    ecols: list[str],
    erows: list[tuple[Any, ...]],
) -> Outcome:
    lower = [c.lower() for c in ecols]
    if sorted(lower) != sorted(c.lower() for c in acols):
        return Outcome(case, "fail", [], f"columns: dosi {acols}, MetricFlow {ecols}", t.query)
    index = {c.lower(): i for i, c in enumerate(acols)}
    names = list(arows[0].keys()) if arows else []
    actual = []
    for r in arows:
        vals = [r[n] for n in names] if names else []
        actual.append(tuple(norm(vals[index[c]]) for c in lower))
    expected = [tuple(norm(v) for v in r) for r in erows]
    ordered = bool(case.spec.get("check_order"))
    if not ordered:
        actual, expected = sorted(actual, key=_key), sorted(expected, key=_key)
    if len(actual) != len(expected):
        return Outcome(
            case,
            "fail",
            [],
            f"rows: dosi {len(actual)}, MetricFlow {len(expected)}" + _first_diff(actual, expected),
            t.query,
        )
    for a, e in zip(actual, expected, strict=True):
        if not all(_same(x, y) for x, y in zip(a, e, strict=True)):
            return Outcome(case, "fail", [], f"values: dosi {a} vs MetricFlow {e}", t.query)
    if not expected and not case.spec.get("allow_empty"):
        return Outcome(case, "fail", [], "empty result", t.query)
    return Outcome(case, "pass", [], "", t.query)


def _first_diff(a: list[tuple[Any, ...]], e: list[tuple[Any, ...]]) -> str:
    extra = [r for r in a if r not in e][:2]
    missing = [r for r in e if r not in a][:2]
    return f" (dosi only: {extra}; MetricFlow only: {missing})"


def norm(v: Any) -> Any:
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, dt.datetime):
        return v.date() if v.time() == dt.time(0) and v.tzinfo is None else v.replace(tzinfo=None)
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return float(v)
    return v


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)
    return a == b


def _key(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple((v is not None, str(type(v).__name__), str(v)) for v in row)


# -- the check query ------------------------------------------------------------------------------
def check_rows(case: Case, db: Path) -> tuple[list[str], list[tuple[Any, ...]]]:
    sql = _jinja(case.check_query, CheckHelpers().check_globals())
    con = duckdb.connect(str(db), read_only=True)
    try:
        cur = con.execute(sql)
        cols = [d[0] for d in cur.description]
        return cols, cur.fetchall()
    finally:
        con.close()


def _jinja(text: str, env: Mapping[str, Any]) -> str:
    return jinja2.Template(text, undefined=jinja2.StrictUndefined).render(**env)


def _g(x: Any) -> str:
    return str(getattr(x, "value", x)).lower()


class CheckHelpers:
    """MetricFlow's check-query helpers, rendered as its DuckDB renderer does."""

    def check_globals(self) -> dict[str, Any]:
        return {
            "source_schema": SCHEMA,
            "render_time_constraint": self.render_time_constraint,
            "TimeGranularity": TimeGranularity,
            "DatePart": DatePart,
            "render_date_sub": self.render_date_sub,
            "render_date_add": self.render_date_add,
            "render_date_trunc": self.render_date_trunc,
            "render_extract": self.render_extract,
            "render_percentile_expr": self.render_percentile_expr,
            "mf_time_spine_source": f"{SCHEMA}.mf_time_spine",
            "double_data_type_name": "DOUBLE",
            "generate_random_uuid": lambda: "GEN_RANDOM_UUID()",
            "cast_to_ts": self.cast_to_ts,
        }

    def where_globals(self) -> dict[str, Any]:
        out = self.check_globals()
        out.update(
            render_dimension_template=lambda n, entity_path=(): (
                f"{{{{ Dimension('{n}', entity_path={list(entity_path)!r}) }}}}"
            ),
            render_entity_template=lambda n, entity_path=(): (
                f"{{{{ Entity('{n}', entity_path={list(entity_path)!r}) }}}}"
            ),
            render_metric_template=lambda n, group_by=(): (
                f"{{{{ Metric('{n}', group_by={list(group_by)!r}) }}}}"
            ),
            render_time_dimension_template=self._td_template,
        )
        return out

    @staticmethod
    def _td_template(
        n: str, time_granularity: str | None = None, entity_path: Sequence[str] = ()
    ) -> str:
        if time_granularity is not None:
            return (
                f"{{{{ TimeDimension('{n}', '{time_granularity}', "
                f"entity_path={list(entity_path)!r}) }}}}"
            )
        return f"{{{{ TimeDimension('{n}', entity_path={list(entity_path)!r}) }}}}"

    @staticmethod
    def cast_to_ts(s: str) -> str:
        return f"CAST('{s}' AS TIMESTAMP)"

    def render_time_constraint(
        self, expr: str, start_time: str | None = None, stop_time: str | None = None
    ) -> str:
        parts = []
        if start_time:
            parts.append(f"CAST({expr} AS TIMESTAMP) >= {self.cast_to_ts(start_time)}")
        if stop_time:
            if len(stop_time) == 10:
                stop = (dt.date.fromisoformat(stop_time) + dt.timedelta(days=1)).isoformat()
            else:
                stop = (dt.datetime.fromisoformat(stop_time) + dt.timedelta(seconds=1)).strftime(
                    "%Y-%m-%dT%H:%M:%S"
                )
            parts.append(f"CAST({expr} AS TIMESTAMP) < {self.cast_to_ts(stop)}")
        return " AND ".join(parts)

    @staticmethod
    def render_date_sub(table_alias: str, column_alias: str, count: int, granularity: Any) -> str:
        g = _g(granularity)
        if g == "quarter":
            return f"{table_alias}.{column_alias} - INTERVAL {int(count) * 3} month"
        return f"{table_alias}.{column_alias} - INTERVAL {int(count)} {g}"

    @staticmethod
    def render_date_add(date_column: str, count_column: str, granularity: Any) -> str:
        g = _g(granularity)
        if g == "quarter":
            return f"{date_column} + INTERVAL (({count_column}) * 3) month"
        return f"{date_column} + INTERVAL ({count_column}) {g}"

    @staticmethod
    def render_date_trunc(expr: str, granularity: Any) -> str:
        return f"DATE_TRUNC('{_g(granularity)}', CAST({expr} AS TIMESTAMP))"

    @staticmethod
    def render_extract(expr: str, date_part: Any) -> str:
        part = {"dow": "isodow", "doy": "doy"}.get(_g(date_part), _g(date_part))
        return f"EXTRACT({part} FROM CAST({expr} AS TIMESTAMP))"

    @staticmethod
    def render_percentile_expr(
        expr: str,
        percentile: float,
        use_discrete_percentile: bool,
        use_approximate_percentile: bool,
    ) -> str:
        if use_approximate_percentile:
            return f"APPROX_QUANTILE({expr}, {percentile})"
        fn = "PERCENTILE_DISC" if use_discrete_percentile else "PERCENTILE_CONT"
        return f"{fn}({percentile}) WITHIN GROUP (ORDER BY {expr})"


# -- the report ----------------------------------------------------------------------------------
def run_all(db: Path, ids: Iterable[str] | None = None) -> Iterator[Outcome]:
    wanted = set(ids) if ids is not None else None
    for case in mf_cases():
        if wanted is None or case.id in wanted:
            try:
                yield run_case(case, db)
            except Exception as err:  # a bed or importer bug: reported per case, never hidden
                yield Outcome(case, "error", [], f"{type(err).__name__}: {err}")


def main(argv: Sequence[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        db = build_database(Path(tmp) / "mf.duckdb")
        outcomes = list(run_all(db))
    for o in outcomes:
        line = f"{o.status:6} {o.case.id}"
        if o.needs:
            line += f"  needs: {', '.join(o.needs)}"
        if o.detail and o.status != "needs":
            line += f"  -- {o.detail[:300]}"
        print(line)
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    print(counts)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
