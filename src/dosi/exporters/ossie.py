"""`dosi export ossie`: the model for consumers that read plain Ossie and ignore DATUS.

Two outputs, both honoring the envelope (datus-extensions §2):

* **plain** (the default): every DATUS entry removed, other vendors' entries kept. Each
  dropped key is a warning carrying its registered ignore impact and fallback, so the
  reader knows what changes. A key whose impact is `silent` (numbers change and nobody can
  tell), or that an entry lists in `requires`, must not be dropped quietly: the export
  refuses (`export_drops_required_key`, one issue per key) unless `allow_silent=True`, and
  then each is a `datus_silent_key_dropped` warning. Objects that cannot exist without their
  extension (a D-LOD field is a bare aggregate, a lod metric a nested one) are removed too,
  with whatever reads them, each a warning naming the engine's reason; the result loads.
  One key is written into plain Ossie instead: D-DATASET on a `COUNT(*)` metric becomes a
  count of that dataset's primary key (never NULL: the same number).
* **envelope** (`keep_datus=True`): the DATUS entries kept, each with the envelope a producer
  owes: `v` raised to the version of the newest key it uses and `requires` listing every
  silent key present (ENV-REQ-03); each change is a `datus_envelope_completed` warning.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from typing import Any

import sqlglot
from sqlglot import exp

from dosi.errors import Diagnostic, ModelError
from dosi.ext.envelope import PayloadDecodeError, decode_json, is_datus_vendor
from dosi.ext.registry import ENVELOPE_KEYS, REGISTRY
from dosi.importers.common import Converted, datus_entry, model_errors
from dosi.model.loader import parse_document

_LISTS = ("datasets", "relationships", "metrics")
_FIELD_PATH = re.compile(r"datasets\[([^\]]+)\]\.fields\[([^\]]+)\]")
MAX_ROUNDS = 20


def _carriers(doc: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(path, object) of every object that may carry custom_extensions."""
    for model in doc.get("semantic_model") or []:
        if not isinstance(model, dict):
            continue
        yield "semantic_model", model
        for key in _LISTS:
            for obj in model.get(key) or []:
                if not isinstance(obj, dict):
                    continue
                path = f"{key}[{obj.get('name')}]"
                yield path, obj
                if key == "datasets":
                    for f in obj.get("fields") or []:
                        if isinstance(f, dict):
                            yield f"{path}.fields[{f.get('name')}]", f


def _payload(entry: dict[str, Any]) -> dict[str, Any]:
    try:
        data = decode_json(entry.get("data")) if isinstance(entry.get("data"), str) else None
    except PayloadDecodeError:
        data = None
    return data if isinstance(data, dict) else {}


def _primary_keys(doc: dict[str, Any]) -> dict[str, str]:
    """dataset -> its first primary-key column (a column that is never NULL)."""
    out = {}
    for model in doc.get("semantic_model") or []:
        for ds in model.get("datasets") or []:
            pk = ds.get("primary_key") or []
            if pk and isinstance(pk[0], str):
                out[str(ds.get("name"))] = pk[0]
    return out


def _lower_dataset(obj: dict[str, Any], dataset: Any, keys: dict[str, str]) -> bool:
    """D-DATASET in plain Ossie: `COUNT(*)` pinned to a dataset counts that dataset's key,
    which is never NULL, so the number is the same. False when there is nothing to lower."""
    pk = keys.get(str(dataset))
    expression = obj.get("expression")
    dialects = expression.get("dialects") if isinstance(expression, dict) else None
    if pk is None or not isinstance(dialects, list):
        return False
    changed = False
    for d in dialects:
        text = d.get("expression") if isinstance(d, dict) else None
        if not isinstance(text, str):
            continue
        try:
            tree = sqlglot.parse_one(text)
        except (sqlglot.errors.ParseError, sqlglot.errors.TokenError):
            continue
        stars = [c for c in tree.find_all(exp.Count) if isinstance(c.this, exp.Star)]
        for c in stars:
            c.set("this", exp.column(pk, table=str(dataset)))
        if stars:
            d["expression"] = tree.sql()
            changed = True
    return changed


def _strip(doc: dict[str, Any], allow_silent: bool) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """Remove the DATUS entries in place: (warnings, refusals)."""
    warnings: list[Diagnostic] = []
    refusals: list[Diagnostic] = []
    keys = _primary_keys(doc)
    for path, obj in _carriers(doc):
        exts = obj.get("custom_extensions")
        if not isinstance(exts, list):
            continue
        kept = []
        for entry in exts:
            if not (isinstance(entry, dict) and is_datus_vendor(entry.get("vendor_name"))):
                kept.append(entry)
                continue
            payload = _payload(entry)
            required = payload.get("requires") if isinstance(payload.get("requires"), list) else []
            for key in payload:
                if key in ENVELOPE_KEYS:
                    continue
                if (
                    key == "dataset"
                    and path.startswith("metrics[")
                    and _lower_dataset(obj, payload[key], keys)
                ):
                    warnings.append(
                        Diagnostic(
                            "datus_key_lowered",
                            f"D-DATASET `dataset` written into plain Ossie: COUNT(*) counts "
                            f"{payload[key]}.{keys[str(payload[key])]}, its never-NULL key",
                            "warning",
                            path=path,
                        )
                    )
                    continue
                info = REGISTRY.get(key)
                silent = (info is not None and info.requires_needed) or key in required
                what = f"{info.extension} `{key}`" if info else f"`{key}`"
                fallback = info.fallback if info else "unknown to this engine"
                if silent and not allow_silent:
                    refusals.append(
                        Diagnostic(
                            "export_drops_required_key",
                            f"{what} changes numbers silently when ignored (impact "
                            f"{info.impact if info else 'required'}): {fallback}",
                            path=path,
                            hint="export with --keep-datus, or pass --allow-silent to drop it "
                            "anyway (each drop is then a warning)",
                        )
                    )
                    continue
                warnings.append(
                    Diagnostic(
                        "datus_silent_key_dropped" if silent else "datus_key_dropped",
                        f"{what} dropped (impact {info.impact if info else 'unknown'}): {fallback}",
                        "warning",
                        path=path,
                    )
                )
        if kept:
            obj["custom_extensions"] = kept
        else:
            obj.pop("custom_extensions", None)
    return warnings, refusals


def _drop(doc: dict[str, Any], issue: Diagnostic) -> bool:
    """Remove the object an engine error names (a metric, field or relationship)."""
    path = issue.path or ""
    model = doc["semantic_model"][0]
    for key in _LISTS:
        prefix = f"{key}["
        if not path.startswith(prefix):
            continue
        name = path[len(prefix) :].split("]", 1)[0]
        rest = path[len(prefix) + len(name) + 1 :]
        items = model.get(key) or []
        if key == "datasets" and rest.startswith(".fields["):
            fname = rest[len(".fields[") :].split("]", 1)[0]
            for ds in items:
                if ds.get("name") == name:
                    before = len(ds.get("fields") or [])
                    ds["fields"] = [f for f in ds.get("fields") or [] if f.get("name") != fname]
                    return len(ds["fields"]) < before
            return False
        if key == "datasets":
            return False  # a dataset is never dropped: the error is reported instead
        before = len(items)
        model[key] = [o for o in items if o.get("name") != name]
        if not model[key]:
            model.pop(key)
        return len(model.get(key) or []) < before
    return False


def _reads(obj: dict[str, Any], dataset: str, name: str, own: bool) -> bool:
    """True when the object's expression reads field `dataset.name` (`own`: a field of the
    same dataset, where the bare name reads it too)."""
    expression = obj.get("expression")
    for d in expression.get("dialects") or [] if isinstance(expression, dict) else []:
        try:
            tree = sqlglot.parse_one(str(d.get("expression")))
        except (sqlglot.errors.ParseError, sqlglot.errors.TokenError):
            continue
        for col in tree.find_all(exp.Column):
            if col.name == name and (col.table == dataset or (own and not col.table)):
                return True
    return False


def _readers(doc: dict[str, Any], dataset: str, name: str) -> list[Diagnostic]:
    """Remove every field and metric that reads the removed field `dataset.name` (which the
    engine would otherwise read as a source column that does not exist)."""
    out: list[Diagnostic] = []
    model = doc["semantic_model"][0]
    pending = [(dataset, name)]
    while pending:
        ds_name, fname = pending.pop()
        for ds in model.get("datasets") or []:
            own = ds.get("name") == ds_name
            for f in list(ds.get("fields") or []):
                if _reads(f, ds_name, fname, own):
                    ds["fields"].remove(f)
                    pending.append((str(ds.get("name")), str(f.get("name"))))
                    out.append(
                        _dropped(
                            f"datasets[{ds.get('name')}].fields[{f.get('name')}]",
                            f"it reads the removed field {ds_name}.{fname}",
                        )
                    )
        for m in list(model.get("metrics") or []):
            if _reads(m, ds_name, fname, False):
                model["metrics"].remove(m)
                out.append(
                    _dropped(
                        f"metrics[{m.get('name')}]", f"it reads the removed field {ds_name}.{fname}"
                    )
                )
    return out


def _dropped(path: str, why: str) -> Diagnostic:
    return Diagnostic("export_object_dropped", f"removed: {why}", "warning", path=path)


def _settle(doc: dict[str, Any]) -> list[Diagnostic]:
    """Drop what no longer compiles without its extension, until the document loads."""
    warnings: list[Diagnostic] = []
    for _ in range(MAX_ROUNDS):
        errors = model_errors(json.dumps(doc), "datus")
        if not errors:
            return warnings
        dropped = False
        for issue in errors:
            if _drop(doc, issue):
                dropped = True
                why = (
                    f"without its DATUS extension it does not load ([{issue.code}] {issue.message})"
                )
                warnings.append(_dropped(str(issue.path), why))
                field = _FIELD_PATH.fullmatch(issue.path or "")
                if field:
                    warnings += _readers(doc, field.group(1), field.group(2))
        if not dropped:
            raise ModelError(errors)
    raise ModelError(model_errors(json.dumps(doc), "datus"))


def _complete(doc: dict[str, Any]) -> list[Diagnostic]:
    """Give every DATUS entry the `v` and `requires` its keys call for."""
    warnings: list[Diagnostic] = []
    for path, obj in _carriers(doc):
        for i, entry in enumerate(obj.get("custom_extensions") or []):
            if not (isinstance(entry, dict) and is_datus_vendor(entry.get("vendor_name"))):
                continue
            payload = _payload(entry)
            keys = {k: v for k, v in payload.items() if k not in ENVELOPE_KEYS}
            fresh = json.loads(datus_entry(keys)["data"])
            requires = list(
                dict.fromkeys([*payload.get("requires", []), *fresh.get("requires", [])])
            )
            changes = []
            old_v = payload.get("v")
            new_v = fresh["v"] if old_v is None or _newer(fresh["v"], old_v) else old_v
            if new_v != old_v:
                changes.append(f'v {old_v if old_v is not None else "(none)"} -> "{new_v}"')
            if requires != list(payload.get("requires", [])):
                changes.append(f"requires {requires}")
            if not changes:
                continue
            out = {"v": new_v, **({"requires": requires} if requires else {}), **keys}
            obj["custom_extensions"][i] = {**entry, "data": json.dumps(out, ensure_ascii=False)}
            warnings.append(
                Diagnostic(
                    "datus_envelope_completed",
                    "DATUS entry completed: " + "; ".join(changes),
                    "warning",
                    path=path,
                )
            )
    return warnings


def _newer(a: str, b: Any) -> bool:
    def parts(v: Any) -> tuple[int, int]:
        text = getattr(v, "text", None) or str(v)
        major, _, minor = text.partition(".")
        try:
            return int(major), int(minor or 0)
        except ValueError:
            return (0, 0)

    return parts(a) > parts(b)


def export_ossie(text: str, *, keep_datus: bool = False, allow_silent: bool = False) -> Converted:
    """The model in `text` as plain Ossie (or, `keep_datus`, with complete DATUS envelopes)."""
    errors = model_errors(text, "datus")
    if errors:
        raise ModelError(errors)
    doc = copy.deepcopy(parse_document(text))
    if keep_datus:
        warnings = _complete(doc)
        header = ("Exported by `dosi export ossie --keep-datus`: DATUS envelopes completed.",)
        return Converted(doc, tuple(warnings), header)
    warnings, refusals = _strip(doc, allow_silent)
    if refusals:
        raise ModelError(refusals)
    warnings += _settle(doc)
    header = (
        "Exported by `dosi export ossie`: plain Ossie, every DATUS extension removed "
        f"({len(warnings)} warnings say what that changes).",
    )
    return Converted(doc, tuple(warnings), header)
