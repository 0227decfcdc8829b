"""`dosi init --match-ids`: keys the database does not declare, inferred from names and data.

Files loaded from CSV or Parquet declare no keys at all. With `--match-ids`:

* a table without a primary key gets `id` or `<singular table>_id` as its key when the data
  says that column is unique and never NULL;
* a column `<name>_id` without a declared foreign key references the table named `<name>`
  (or its plural) when that table's single-column key is `<name>_id` or `id`.

Both are guesses from names and today's rows, so the YAML marks them as inferred.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from dosi.errors import ExecuteError
from dosi.execute.runner import Runner
from dosi.scaffold.catalog import Catalog, ForeignKey, Table
from dosi.scaffold.types import ossie_datatype

_KEY_TYPES = frozenset({"Integer", "String", "Decimal"})


def _singular(name: str) -> str:
    low = name.lower()
    if low.endswith("ies"):
        return name[:-3] + "y"
    if low.endswith(("ses", "xes", "ches", "shes")):
        return name[:-2]
    if low.endswith("s") and not low.endswith("ss"):
        return name[:-1]
    return name


def _plurals(stem: str) -> tuple[str, ...]:
    forms = [stem, stem + "s", stem + "es"]
    if stem.endswith("y"):
        forms.append(stem[:-1] + "ies")
    return tuple(forms)


def _unique(runner: Runner, dialect: str, table: Table, column: str) -> bool:
    """The column holds no NULL and no repeated value (one aggregate scan)."""
    col = exp.column(column, quoted=True)
    query = exp.select(
        exp.Count(this=exp.Star()).as_("n"),
        exp.Count(this=exp.Distinct(expressions=[col])).as_("d"),
        exp.Count(this=col.copy()).as_("nn"),
    ).from_(exp.table_(table.name, db=table.schema, quoted=True))
    try:
        rows = runner.run(query.sql(dialect)).to_pylist()
    except ExecuteError:
        return False
    if not rows:
        return False
    n, d, nn = (int(v or 0) for v in rows[0].values())
    return n > 0 and n == d == nn


def _key_column(table: Table) -> str | None:
    if len(table.primary_key) == 1:
        return table.primary_key[0]
    return None


def infer_keys(catalog: Catalog, runner: Runner, dialect: str) -> Catalog:
    """The catalog with inferred primary keys and `*_id` references added."""
    tables: list[Table] = []
    for t in catalog.tables:
        if t.primary_key:
            tables.append(t)
            continue
        for cand in ("id", f"{_singular(t.name)}_id", f"{t.name}_id"):
            col = t.column(cand)
            typed = col is not None and ossie_datatype(col.raw_type) in _KEY_TYPES
            if typed and _unique(runner, dialect, t, cand):
                t = replace(t, primary_key=(cand,), pk_inferred=True)
                break
        tables.append(t)
    by_name = {t.name.lower(): t for t in tables}
    out: list[Table] = []
    for t in tables:
        declared = {c for fk in t.foreign_keys for c in fk.columns}
        refs = list(t.foreign_keys)
        for col in t.columns:
            low = col.name.lower()
            if not low.endswith("_id") or col.name in declared or low == "_id":
                continue
            if t.primary_key == (col.name,):
                continue
            stem = low[: -len("_id")]
            target = next((by_name[f] for f in _plurals(stem) if f in by_name), None)
            if target is None or target.name == t.name:
                continue
            key = _key_column(target)
            if key is None or key.lower() not in (low, "id"):
                continue
            refs.append(ForeignKey((col.name,), target.name, (key,), target.schema, True))
        out.append(replace(t, foreign_keys=tuple(refs)))
    return replace(catalog, tables=tuple(out))
