"""Model compile: Ossie document -> ModelIr.

Runs every check in one pass and raises a single ModelError listing all problems (with object
paths and YAML lines). DATUS payloads are read only through `dosi.ext`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import sqlglot
from sqlglot import exp

from dosi import ext
from dosi.compiler.fields import (
    RawField,
    field_reference,
    physical_column,
    pick_expression,
    qualify_dataset_fields,
)
from dosi.compiler.measures import (
    MEASURING_AGGS,
    agg_name,
    infer_kind,
    measure_stem,
    measured_value_columns,
    safe_division,
)
from dosi.compiler.sqlparse import (
    MODEL_LIMITS,
    OSI_READERS,
    SqlSnippetError,
    SqlTooComplex,
    check_text_limits,
    has_window,
    parse_scalar,
    strip_parens,
)
from dosi.compiler.trusted_sql import untrusted_construct
from dosi.errors import Diagnostic, DiagnosticSink, ModelError, closest
from dosi.ir.graph import RelationshipGraph
from dosi.ir.model import (
    DatasetIr,
    FieldIr,
    MeasureIr,
    MetricIr,
    ModelIr,
    RelationshipIr,
)
from dosi.model.loader import LineIndex, read_document
from dosi.model.schema import (
    TEMPORAL_DATATYPES,
    DatasetSpec,
    MetricSpec,
    SemanticModelSpec,
    raw_extensions,
)


def compile_model_text(text: str, mode: str = "datus", trust_sql: bool = False) -> ModelIr:
    """Load and compile a model; `trust_sql=True` admits model SQL that reads files or settings
    or writes (dosi.compiler.trusted_sql)."""
    loaded = read_document(text)
    doc = loaded.spec
    lines = LineIndex(text)
    sink = DiagnosticSink()
    sink.extend(loaded.warnings)
    if len(doc.semantic_model) > 1:
        sink.warn(
            "multiple_semantic_models",
            f"the document holds {len(doc.semantic_model)} semantic models; using the first, "
            f"`{doc.semantic_model[0].name}`",
        )
    try:
        model = _ModelCompiler(doc.semantic_model[0], mode, sink, lines, trust_sql).run()
    except RecursionError:  # a backstop: expressions are bounded before they are parsed
        raise ModelError(
            [
                Diagnostic(
                    "expression_too_complex",
                    "the model nests too deeply to compile",
                    hint='simplify the model\'s expressions (README, "Limits")',
                )
            ]
        ) from None
    errors = sink.errors
    if errors:
        raise ModelError(errors, sink.warnings)
    model.warnings = sink.warnings
    model.source_version = loaded.version
    return model


@dataclass
class _Ctx:
    path: str
    line: int | None


class _ModelCompiler:
    def __init__(
        self,
        spec: SemanticModelSpec,
        mode: str,
        sink: DiagnosticSink,
        lines: LineIndex,
        trust_sql: bool = False,
    ) -> None:
        self.spec = spec
        self.trust_sql = trust_sql
        self.mode = mode
        self.sink = sink
        self.lines = lines
        self.datasets: dict[str, DatasetIr] = {}
        self.relationships: list[RelationshipIr] = []
        self.metrics: dict[str, MetricIr] = {}
        self.measures: dict[str, MeasureIr] = {}
        self._measure_by_sig: dict[str, str] = {}
        self._explicit_names: dict[str, str] = {}  # measure name -> signature (D-MEASURE)
        self._measured_fields: set[tuple[str, str]] = set()
        self.unavailable: dict[str, Diagnostic] = {}

    # -- helpers -----------------------------------------------------------------------------
    def _line(self, steps: list[tuple[str, str | None]]) -> int | None:
        return self.lines.line_of_named(steps)

    def _read_ext(self, carrier: str, path: str, exts: object, line: int | None) -> object:
        result = ext.read_extensions(carrier, path, raw_extensions(exts), self.mode)  # type: ignore[arg-type]
        for d in result.diagnostics:
            if d.line is None and line is not None:
                d = type(d)(d.code, d.message, d.severity, d.path, line, d.hint, d.candidates)
            self.sink.items.append(d)
        return result.payload

    # -- passes ------------------------------------------------------------------------------
    def run(self) -> ModelIr:
        spec = self.spec
        self._read_ext("semantic_model", "semantic_model", spec.custom_extensions, None)
        self._check_unique([d.name for d in spec.datasets], "dataset", "datasets")
        for ds in spec.datasets:
            if ds.name in self.datasets:
                continue
            self.datasets[ds.name] = self._dataset(ds)
        rels = spec.relationships or []
        self._check_unique([r.name for r in rels], "relationship", "relationships")
        for rel in rels:
            ir = self._relationship(rel)
            if ir is not None:
                self.relationships.append(ir)
        self.graph = RelationshipGraph(self.relationships)
        metrics = spec.metrics or []
        self._check_unique([m.name for m in metrics], "metric", "metrics")
        for m in metrics:
            if m.name in self.metrics:
                continue
            mark = len(self.sink.items)
            ir = self._metric(m)
            if ir is not None:
                self.metrics[m.name] = ir
            elif self.mode == "basic":
                self._defer_basic_failure(m.name, mark)
        self._check_window_references()
        model = ModelIr(
            name=spec.name,
            datasets=self.datasets,
            relationships=self.relationships,
            metrics=self.metrics,
            measures=self.measures,
            description=spec.description,
            mode=self.mode,
        )
        model.dimension_roles = self._dimension_roles()
        model.unavailable_metrics = self.unavailable
        return model

    def _defer_basic_failure(self, metric: str, mark: int) -> None:
        """Basic mode (§5): the same model stays valid; a metric that only the ignored DATUS
        payload made computable (a COUNT(*) pinned by D-DATASET, a stem collision resolved
        by D-MEASURE) becomes unavailable, and querying it says why."""
        new = self.sink.items[mark:]
        errors = [d for d in new if d.severity == "error"]
        if not errors or any(d.code not in _BASIC_DEFERRABLE for d in errors):
            return
        del self.sink.items[mark:]
        self.sink.items.extend(d for d in new if d.severity != "error")
        first = errors[0]
        self.unavailable[metric] = first
        self.sink.warn(
            "metric_unavailable_in_basic_mode",
            f"metric `{metric}` cannot be computed in basic mode: {first.message}",
            path=first.path,
            line=first.line,
            hint="run in datus mode, where its DATUS extension applies",
        )

    def _check_unique(self, names: list[str], kind: str, key: str) -> None:
        seen: set[str] = set()
        for i, n in enumerate(names):
            if n in seen:
                self.sink.error(
                    "duplicate_name",
                    f"{kind} name `{n}` is declared more than once",
                    path=f"{key}[{n}]",
                    # the line of this (repeated) declaration, not of the first one
                    line=self.lines.line_of(("semantic_model", 0, key, i)),
                    hint=f"give every {kind} a unique name",
                )
            seen.add(n)

    def _dataset(self, ds: DatasetSpec) -> DatasetIr:
        dpath = f"datasets[{ds.name}]"
        dline = self._line([("datasets", ds.name)])
        dext = self._read_ext("dataset", dpath, ds.custom_extensions, dline)
        fields = ds.fields or []
        names = [f.name for f in fields]
        seen: set[str] = set()
        ds_index = [d.name for d in self.spec.datasets].index(ds.name)
        for i, n in enumerate(names):
            if n in seen:
                self.sink.error(
                    "duplicate_name",
                    f"field `{n}` is declared more than once in dataset `{ds.name}`",
                    path=f"{dpath}.fields[{n}]",
                    line=self.lines.line_of(
                        ("semantic_model", 0, "datasets", ds_index, "fields", i)
                    ),
                )
            seen.add(n)
        raw: dict[str, RawField] = {}
        line_map: dict[str, int | None] = {}
        for f in fields:
            if f.name in raw:
                continue
            dialect, text = pick_expression(f.expression)
            fpath = f"{dpath}.fields[{f.name}]"
            raw[f.name] = RawField(f.name, text, OSI_READERS.get(dialect), fpath)
            line_map[fpath] = self._line([("datasets", ds.name), ("fields", f.name)])
        exprs = qualify_dataset_fields(ds.name, raw, self.sink, line_map, self.trust_sql)
        field_irs: dict[str, FieldIr] = {}
        for f in fields:
            if f.name in field_irs or f.name not in exprs:
                continue
            fpath = f"{dpath}.fields[{f.name}]"
            fext = self._read_ext("field", fpath, f.custom_extensions, line_map.get(fpath))
            is_time = (
                f.dimension.is_time
                if f.dimension is not None and f.dimension.is_time is not None
                else (f.datatype in TEMPORAL_DATATYPES)
            )
            grain = getattr(fext, "time_granularity", None)
            if grain is not None and not is_time:
                self.sink.error(
                    "invalid_datus_extension",
                    f"`time_granularity` on `{ds.name}.{f.name}` needs a time field "
                    "(dimension.is_time true, or a Date/DateTime datatype)",
                    path=fpath,
                    line=line_map.get(fpath),
                )
                grain = None
            field_irs[f.name] = FieldIr(
                dataset=ds.name,
                name=f.name,
                expr=exprs[f.name],
                datatype=f.datatype,
                is_time=bool(is_time),
                time_granularity=grain,
                is_dimension=getattr(fext, "is_dimension", None),
                description=f.description,
                label=f.label,
                source_sql=raw[f.name].text,
            )
        self._check_keys(ds, dpath, dline)
        primary = self._primary_time(ds.name, dpath, dline, field_irs, dext)
        return DatasetIr(
            name=ds.name,
            source=self._source(ds, dpath, dline),
            primary_key=tuple(ds.primary_key or ()),
            unique_keys=tuple(tuple(k) for k in (ds.unique_keys or ())),
            fields=field_irs,
            primary_time=primary,
            description=ds.description,
        )

    def _check_keys(self, ds: DatasetSpec, dpath: str, dline: int | None) -> None:
        """Ossie "Datasets": primary_key and unique_keys name columns of the source, declared
        as fields or not. A column repeated within one key, or a unique key declared twice, is
        harmless (the schema allows it) but a likely slip: a warning."""
        keys = [("primary_key", list(ds.primary_key))] if ds.primary_key else []
        keys += [("unique_keys", list(k)) for k in ds.unique_keys or []]
        seen: set[tuple[str, ...]] = set()
        for where, cols in keys:
            repeated = sorted({c for c in cols if cols.count(c) > 1})
            if repeated:
                self.sink.warn(
                    "duplicate_key_column",
                    f"{where} of `{ds.name}` lists {', '.join(f'`{c}`' for c in repeated)} "
                    "more than once",
                    path=f"{dpath}.{where}",
                    line=dline,
                    hint="name each column of a key once",
                )
            if where == "unique_keys" and tuple(cols) in seen:
                self.sink.warn(
                    "duplicate_key",
                    f"unique_keys of `{ds.name}` declares [{', '.join(cols)}] more than once",
                    path=f"{dpath}.unique_keys",
                    line=dline,
                    hint="declare each unique key once",
                )
            if where == "unique_keys":
                seen.add(tuple(cols))

    def _primary_time(
        self,
        name: str,
        dpath: str,
        dline: int | None,
        fields: dict[str, FieldIr],
        dext: object,
    ) -> str | None:
        declared = getattr(dext, "time_dimension", None)
        if declared is not None:
            target = declared.split(".", 1)[1] if declared.startswith(name + ".") else declared
            f = fields.get(target)
            if f is None or not f.is_time:
                what = "is not a field of it" if f is None else "is not a time field"
                self.sink.error(
                    "invalid_datus_extension",
                    f"`time_dimension` of dataset `{name}` names `{declared}`, which {what}",
                    path=dpath,
                    line=dline,
                    candidates=[f.name for f in fields.values() if f.is_time],
                    hint="name one of the dataset's is_time fields",
                )
            else:
                return target
        times = [f.name for f in fields.values() if f.is_time]
        return times[0] if len(times) == 1 else None

    def _source(self, ds: DatasetSpec, dpath: str, dline: int | None) -> exp.Expression:
        src = ds.source.strip()
        head = src[:6].lower()
        node: exp.Expression
        if head.startswith("select") or head.startswith("with") or src.startswith("("):
            try:
                check_text_limits(src, MODEL_LIMITS, f"source of `{ds.name}`")
                inner = src[1:-1] if src.startswith("(") and src.endswith(")") else src
                q = sqlglot.parse_one(inner)
            except Exception as err:  # parse errors, limits, a RecursionError backstop
                self.sink.error(
                    "invalid_source",
                    f"source of `{ds.name}` is not a valid query: {str(err)[:300]}",
                    path=dpath,
                    line=dline,
                )
                return exp.to_table("invalid_source")
            node = exp.Subquery(this=q)
        else:
            try:
                node = exp.to_table(src)
            except Exception:
                self.sink.error(
                    "invalid_source",
                    f"source `{src[:200]}` of `{ds.name}` is not a table reference",
                    path=dpath,
                    line=dline,
                )
                return exp.to_table("invalid_source")
        if not self.trust_sql:
            what = untrusted_construct(node)
            if what is not None:
                self._untrusted(f"source of `{ds.name}`", what, dpath, dline)
                return exp.to_table("invalid_source")
        return node

    def _untrusted(self, where: str, what: str, path: str, line: int | None) -> None:
        self.sink.error(
            "untrusted_sql",
            f"{where} uses {what}; model SQL may not write, run statements or read files or "
            "settings",
            path=path,
            line=line,
            hint="remove it, or load the model with trust_sql=True (CLI --trust-sql) if you "
            "trust its author",
        )

    def _relationship(self, rel: object) -> RelationshipIr | None:
        from dosi.model.schema import RelationshipSpec

        assert isinstance(rel, RelationshipSpec)
        rpath = f"relationships[{rel.name}]"
        rline = self._line([("relationships", rel.name)])
        rext = self._read_ext("relationship", rpath, rel.custom_extensions, rline)
        ok = True
        for side, ds in (("from", rel.from_), ("to", rel.to)):
            if ds not in self.datasets:
                self.sink.error(
                    "unknown_dataset",
                    f"relationship `{rel.name}` {side} `{ds}`: no such dataset",
                    path=rpath,
                    line=rline,
                    candidates=closest(ds, list(self.datasets)),
                    stage="invalid_model",
                )
                ok = False
        if len(rel.from_columns) != len(rel.to_columns):
            self.sink.error(
                "column_count_mismatch",
                f"relationship `{rel.name}` pairs {len(rel.from_columns)} from_columns with "
                f"{len(rel.to_columns)} to_columns; they must correspond one to one",
                path=rpath,
                line=rline,
            )
            ok = False
        if not ok:
            return None
        from_exprs = self._rel_columns(rel.from_, rel.from_columns)
        to_exprs = self._rel_columns(rel.to, rel.to_columns)
        join_type = getattr(rext, "join_type", None) or "left"
        return RelationshipIr(
            name=rel.name,
            from_dataset=rel.from_,
            to_dataset=rel.to,
            from_exprs=tuple(from_exprs),
            to_exprs=tuple(to_exprs),
            from_columns=tuple(rel.from_columns),
            to_columns=tuple(rel.to_columns),
            join_type=join_type,
        )

    def _rel_columns(self, ds: str, cols: list[str]) -> list[exp.Expression]:
        """Ossie "Relationships": from/to columns are columns of the dataset's source. A
        declared field of that name stands for the column (its expression, as the reference
        reads it); any other name is the physical column, qualified by the dataset."""
        fields = self.datasets[ds].fields
        return [fields[c].expr if c in fields else physical_column(ds, c) for c in cols]

    # -- metrics -------------------------------------------------------------------------------
    def _metric(self, m: MetricSpec) -> MetricIr | None:
        mpath = f"metrics[{m.name}]"
        mline = self._line([("metrics", m.name)])
        mext = self._read_ext("metric", mpath, m.custom_extensions, mline)
        assert isinstance(mext, ext.MetricExt)
        dialect, text = pick_expression(m.expression)
        ctx = _Ctx(mpath, mline)
        try:
            tree = parse_scalar(text, OSI_READERS.get(dialect))
        except SqlTooComplex as err:
            self.sink.error("expression_too_complex", str(err), path=mpath, line=mline)
            return None
        except SqlSnippetError as err:
            self.sink.error("unparseable_expression", str(err), path=mpath, line=mline)
            return None
        if not self.trust_sql:
            what = untrusted_construct(tree)
            if what is not None:
                self._untrusted(f"metric `{m.name}`", what, mpath, mline)
                return None
        if has_window(tree):
            self.sink.error(
                "window_in_metric",
                f"metric `{m.name}` uses a window function (`{text}`)",
                path=mpath,
                line=mline,
                hint="declare the window with the DATUS `window` extension on a plain aggregate "
                "metric (D-WINDOW)",
            )
            return None
        aggs = [n for n in tree.find_all(exp.AggFunc)]
        if not aggs:
            self.sink.error(
                "not_an_aggregate",
                f"metric `{m.name}` has no aggregate (`{text}`); metrics aggregate fields",
                path=mpath,
                line=mline,
                hint="wrap the field in an aggregate, e.g. SUM(dataset.field)",
            )
            return None
        for a in aggs:
            if any(isinstance(p, exp.AggFunc) for p in _ancestors(a)):
                self.sink.error(
                    "nested_aggregate",
                    f"metric `{m.name}` nests aggregates (`{text}`)",
                    path=mpath,
                    line=mline,
                    hint="aggregate a field once; nested aggregation needs D-LOD",
                )
                return None
        self._note_measured_fields(tree)
        if not self._resolve_metric_columns(m.name, tree, ctx):
            return None
        kind = infer_kind(tree)
        pin = mext.dataset
        if pin is not None and pin not in self.datasets:
            self.sink.error(
                "invalid_datus_extension",
                f"`dataset` of metric `{m.name}` names `{pin}`, which is not a dataset",
                path=mpath,
                line=mline,
                candidates=closest(pin, list(self.datasets)),
            )
            pin = None
        formula, measure_names, owners = self._measures(m.name, tree, pin, mext, ctx)
        if formula is None:
            return None
        time_axis = self._metric_time_axis(m.name, mext, owners, ctx)
        window = mext.window
        if window is not None and kind != "aggregate":
            self.sink.error(
                "invalid_datus_extension",
                f"metric `{m.name}` carries `window` but its expression is a {kind}; the base "
                "of a window must be a single plain aggregate",
                path=mpath,
                line=mline,
                hint="put the window on a single-aggregate metric",
            )
            window = None
        # D-FILL never applies to a window output: NULL means "no comparable period" (D-WINDOW)
        fill = None if window is not None else mext.fill_nulls_with
        pure_count = kind == "aggregate" and self.measures[measure_names[0]].is_count
        return MetricIr(
            name=m.name,
            kind=kind,  # type: ignore[arg-type]
            formula=formula,
            measures=tuple(measure_names),
            datasets=frozenset(owners),
            time_axis=time_axis,
            fill_nulls_with=fill,
            window=window,
            description=m.description,
            datatype=m.datatype,
            source_sql=text,
            _pure_count=pure_count,
        )

    def _note_measured_fields(self, tree: exp.Expression) -> None:
        """D-DIM inference: fields whose values SUM/AVG/STDDEV/VAR read are measures."""
        for a in tree.find_all(exp.AggFunc):
            if agg_name(a) not in MEASURING_AGGS and not agg_name(a).startswith(("sum", "avg")):
                continue
            arg = a.this.expressions[0] if isinstance(a.this, exp.Distinct) else a.this
            if not isinstance(arg, exp.Expression):
                continue
            for c in measured_value_columns(arg):
                if c.table:
                    self._measured_fields.add((c.table, c.name))
                else:
                    for d in self.datasets.values():
                        if c.name in d.fields:
                            self._measured_fields.add((d.name, c.name))

    def _resolve_metric_columns(self, metric: str, tree: exp.Expression, ctx: _Ctx) -> bool:
        """Replace `dataset.field` (or a unique bare `field`) by the field's expression."""
        ok = True
        for col in list(tree.find_all(exp.Column)):
            qual, name = col.table, col.name
            if qual:
                ds = self.datasets.get(qual)
                if ds is None:
                    self.sink.error(
                        "unknown_dataset",
                        f"metric `{metric}` reads `{col.sql()}`: no dataset `{qual}`",
                        path=ctx.path,
                        line=ctx.line,
                        candidates=closest(qual, list(self.datasets)),
                    )
                    ok = False
                    continue
                f = ds.fields.get(name)
                if f is None:
                    self.sink.error(
                        "unknown_field",
                        f"metric `{metric}` reads `{qual}.{name}`, which is not a field of "
                        f"`{qual}`",
                        path=ctx.path,
                        line=ctx.line,
                        candidates=[f"{qual}.{c}" for c in closest(name, list(ds.fields))],
                    )
                    ok = False
                    continue
            else:
                matches = [d.fields[name] for d in self.datasets.values() if name in d.fields]
                if len(matches) != 1:
                    code = "unknown_field" if not matches else "ambiguous_field"
                    everything = [f"{d}.{n}" for d, x in self.datasets.items() for n in x.fields]
                    self.sink.error(
                        code,
                        f"metric `{metric}` reads bare `{name}`, which "
                        + ("matches no field" if not matches else "several datasets define"),
                        path=ctx.path,
                        line=ctx.line,
                        candidates=[m.qualified for m in matches] or closest(name, everything),
                        hint="qualify it as dataset.field",
                    )
                    ok = False
                    continue
                f = matches[0]
            col.replace(field_reference(f.qualified, f.expr))
        return ok

    def _owner(self, metric: str, node: exp.AggFunc, ctx: _Ctx) -> str | bool | None:
        """The dataset a measure aggregates: the one every other referenced dataset is
        many-to-one reachable from. None = no column (COUNT(*) or a constant)."""
        refs = {c.table for c in node.find_all(exp.Column) if c.table}
        if not refs:
            return None
        if len(refs) == 1:
            return next(iter(refs))
        for cand in sorted(refs):
            if all(self.graph.reachable(cand, other) for other in refs if other != cand):
                return cand
        self.sink.error(
            "measure_spans_datasets",
            f"metric `{metric}` aggregates over {', '.join(sorted(refs))}, which no single "
            "dataset reaches through many-to-one relationships",
            path=ctx.path,
            line=ctx.line,
            hint="aggregate each dataset in its own aggregate call",
        )
        return False

    def _measures(
        self,
        metric: str,
        tree: exp.Expression,
        pin: str | None,
        mext: ext.MetricExt,
        ctx: _Ctx,
    ) -> tuple[exp.Expression | None, list[str], list[str]]:
        aggs = list(tree.find_all(exp.AggFunc))
        owners: list[str | None] = []
        for a in aggs:
            o = self._owner(metric, a, ctx)
            if o is False:
                return None, [], []
            owners.append(o)  # type: ignore[arg-type]
        known = {o for o in owners if o}
        for i, o in enumerate(owners):
            if o is not None:
                continue
            if pin is not None:
                owners[i] = pin
            elif len(known) == 1:
                owners[i] = next(iter(known))
            elif len(self.datasets) == 1:
                owners[i] = next(iter(self.datasets))
            else:
                self.sink.error(
                    "count_star_needs_dataset",
                    f"metric `{metric}` counts rows (`{aggs[i].sql()}`) but nothing says which "
                    "dataset's rows",
                    path=ctx.path,
                    line=ctx.line,
                    candidates=sorted(self.datasets),
                    hint='pin it with the DATUS extension {"dataset": "<name>"} (D-DATASET), or '
                    "count a column: COUNT(dataset.key)",
                )
                return None, [], []
        explicit = mext.measure_name
        if explicit is not None and len(aggs) != 1:
            self.sink.error(
                "invalid_datus_extension",
                f"`measure` on metric `{metric}` needs a single-aggregate expression",
                path=ctx.path,
                line=ctx.line,
            )
            explicit = None
        names: list[str] = []
        replacements: list[tuple[exp.AggFunc, str]] = []
        for a, owner in zip(aggs, owners, strict=True):
            assert owner is not None
            signature = f"{owner}:{a.sql()}"
            name = self._measure_name(metric, a, owner, signature, explicit, ctx)
            if name is None:
                return None, [], []
            names.append(name)
            replacements.append((a, name))
        formula = tree
        for a, name in replacements:
            replaced = exp.column(name)
            if a is formula:
                formula = replaced
            else:
                a.replace(replaced)
        formula = safe_division(strip_parens(formula))
        loose = [c for c in formula.find_all(exp.Column) if c.table]
        if loose:
            self.sink.error(
                "not_an_aggregate",
                f"metric `{metric}` reads `{loose[0].sql()}` outside any aggregate",
                path=ctx.path,
                line=ctx.line,
                hint="wrap every field reference of a metric in an aggregate",
            )
            return None, [], []
        return formula, names, [o for o in owners if o]

    def _measure_name(
        self,
        metric: str,
        node: exp.AggFunc,
        owner: str,
        signature: str,
        explicit: str | None,
        ctx: _Ctx,
    ) -> str | None:
        """Measures are keyed by signature; the name is the D-MEASURE declaration if any, else
        the stem. A name may never stand for two signatures, nor a signature for two declared
        names (measure_name_collision)."""
        existing = self._measure_by_sig.get(signature)
        if explicit is None:
            if existing is not None:
                return existing
            stem = measure_stem(owner, node)
            if stem in self.measures:
                self._collision(metric, stem, ctx, other_sig=self.measures[stem].signature)
                return None
            self.measures[stem] = self._new_measure(stem, node, owner, signature, False)
            self._measure_by_sig[signature] = stem
            return stem
        if existing == explicit:
            return explicit
        if self._explicit_names.get(explicit, signature) != signature:
            self._collision(metric, explicit, ctx)
            return None
        if existing is not None and self.measures[existing].explicit_name:
            self._collision(metric, explicit, ctx, other=existing)
            return None
        if explicit in self.measures:  # the declared name is another aggregate's stem (MEAS-04)
            self._collision(metric, explicit, ctx, other_sig=self.measures[explicit].signature)
            return None
        if existing is not None:
            # an earlier textual twin took the stem: the declared name wins for both
            old = self.measures.pop(existing)
            self._rename_measure(existing, explicit)
            self.measures[explicit] = replace(old, name=explicit, explicit_name=True)
        else:
            self.measures[explicit] = self._new_measure(explicit, node, owner, signature, True)
        self._measure_by_sig[signature] = explicit
        self._explicit_names[explicit] = signature
        return explicit

    def _rename_measure(self, old: str, new: str) -> None:
        for name, m in list(self.metrics.items()):
            if old in m.measures:
                formula = m.formula.transform(
                    lambda n: (
                        exp.column(new)
                        if isinstance(n, exp.Column) and not n.table and n.name == old
                        else n
                    )
                )
                self.metrics[name] = replace(
                    m, formula=formula, measures=tuple(new if x == old else x for x in m.measures)
                )

    def _new_measure(
        self, name: str, node: exp.AggFunc, owner: str, signature: str, explicit: bool
    ) -> MeasureIr:
        refs = frozenset({c.table for c in node.find_all(exp.Column) if c.table} | {owner})
        return MeasureIr(
            name=name,
            dataset=owner,
            agg=agg_name(node),
            expr=node.copy(),
            signature=signature,
            datasets=refs,
            explicit_name=explicit,
        )

    def _collision(
        self,
        metric: str,
        name: str,
        ctx: _Ctx,
        other: str | None = None,
        other_sig: str | None = None,
    ) -> None:
        self.sink.error(
            "measure_name_collision",
            f"metric `{metric}`: measure name `{name}` already names a different aggregate"
            + (f" ({other_sig.split(':', 1)[1]})" if other_sig else "")
            + (f" (also named `{other}`)" if other else ""),
            path=ctx.path,
            line=ctx.line,
            hint='name the measure explicitly with the DATUS extension {"measure": {"name": '
            '"..."}} (D-MEASURE) and list "measure" in requires',
        )

    def _metric_time_axis(
        self, metric: str, mext: ext.MetricExt, owners: list[str], ctx: _Ctx
    ) -> str | None:
        """D-TIME: the metric's declaration, else the unique primary time of its datasets."""
        declared = mext.time_dimension
        if declared is not None:
            f = self._find_time_field(declared, owners)
            if f is None or not f.is_time:
                what = (
                    "matches no field" if f is None else f"names `{f.qualified}`, not a time field"
                )
                self.sink.error(
                    "invalid_datus_extension",
                    f"`time_dimension` of metric `{metric}` ({declared}) {what}",
                    path=ctx.path,
                    line=ctx.line,
                    candidates=[
                        x.qualified
                        for d in self.datasets.values()
                        for x in d.fields.values()
                        if x.is_time
                    ][:8],
                )
            else:
                return f.qualified
        primaries = {
            f"{o}.{self.datasets[o].primary_time}"
            for o in owners
            if self.datasets[o].primary_time is not None
        }
        if len(primaries) == 1:
            return next(iter(primaries))
        return None

    def _find_time_field(self, ref: str, owners: list[str]) -> FieldIr | None:
        if "." in ref:
            ds, _, name = ref.partition(".")
            d = self.datasets.get(ds)
            return d.fields.get(name) if d else None
        # a bare name resolves in the metric's own datasets first (D-TIME)
        for o in dict.fromkeys(owners):
            f = self.datasets[o].fields.get(ref)
            if f is not None:
                return f
        hits = [d.fields[ref] for d in self.datasets.values() if ref in d.fields]
        return hits[0] if len(hits) == 1 else None

    def _check_window_references(self) -> None:
        """frame.second names a plain single-aggregate metric; partition.exclude names fields."""
        for name, m in list(self.metrics.items()):
            w = m.window
            if w is None:
                continue
            mpath = f"metrics[{name}]"
            mline = self._line([("metrics", name)])
            second = getattr(w, "second", None)
            if second is not None:
                other = self.metrics.get(second)
                if other is None or other.kind != "aggregate" or other.window is not None:
                    why = (
                        "no such metric" if other is None else "it is not a plain single aggregate"
                    )
                    self.sink.error(
                        "invalid_datus_extension",
                        f"`window.frame.second` of `{name}` names `{second}`: {why}",
                        path=mpath,
                        line=mline,
                        candidates=closest(second, list(self.metrics)),
                    )
                elif other.datasets != m.datasets:
                    self.sink.error(
                        "invalid_datus_extension",
                        f"`window.frame.second` of `{name}` names `{second}`, which aggregates "
                        "another dataset; both series must come from one base dataset",
                        path=mpath,
                        line=mline,
                    )
            partition = getattr(w, "partition", None)
            for ref in getattr(partition, "exclude", ()) or ():
                ds, _, fname = ref.partition(".")
                d = self.datasets.get(ds)
                if d is None or fname not in d.fields:
                    everything = [
                        f.qualified for x in self.datasets.values() for f in x.fields.values()
                    ]
                    self.sink.error(
                        "invalid_datus_extension",
                        f"`window.partition.exclude` of `{name}` names `{ref}`, which is not a "
                        "field of the model",
                        path=mpath,
                        line=mline,
                        candidates=closest(ref, everything),
                    )

    # -- D-DIM -----------------------------------------------------------------------------
    def _dimension_roles(self) -> dict[tuple[str, str], tuple[bool, str]]:
        owners = {o for m in self.metrics.values() for o in m.datasets}
        rel_cols: dict[str, set[str]] = {}
        for r in self.relationships:
            rel_cols.setdefault(r.from_dataset, set()).update(r.from_columns)
            rel_cols.setdefault(r.to_dataset, set()).update(r.to_columns)
        roles: dict[tuple[str, str], tuple[bool, str]] = {}
        for d in self.datasets.values():
            single_unique = (
                {k[0] for k in d.unique_keys if len(k) == 1} if d.name in owners else set()
            )
            for f in d.fields.values():
                key = (d.name, f.name)
                # keys and relationship columns name source columns: a field plays their
                # role when it is that column, by name or by its expression
                names = {f.name} | _bare_column(f.expr)
                if f.is_dimension is not None:
                    roles[key] = (f.is_dimension, "declared")
                elif names & set(d.primary_key):
                    roles[key] = (False, "primary_key")
                elif names & single_unique:
                    roles[key] = (False, "unique_key")
                elif names & rel_cols.get(d.name, set()):
                    roles[key] = (False, "relationship_column")
                elif key in self._measured_fields:
                    roles[key] = (False, "measured")
                else:
                    roles[key] = (True, "time" if f.is_time else "default")
        return roles


def _bare_column(expr: exp.Expression) -> set[str]:
    """The source column a field is, when its expression is exactly one column."""
    return {expr.name} if isinstance(expr, exp.Column) else set()


_BASIC_DEFERRABLE = frozenset({"count_star_needs_dataset", "measure_name_collision"})


def _ancestors(node: exp.Expression):  # type: ignore[no-untyped-def]
    p = node.parent
    while p is not None:
        yield p
        p = p.parent


__all__ = ["compile_model_text"]
