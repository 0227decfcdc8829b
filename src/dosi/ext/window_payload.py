"""D-WINDOW: validation of the `window` payload and desugaring into the IR of `window.py`.

Everything here follows window-metrics-extension.md ("The window payload", each general form,
the three sugars, "Shared modifiers", "Validation") plus the later in-family growth recorded in
datus-extensions §7 (1.9: `frame.scope`, `order.nulls`). The sugars are desugared here, so the
planner only ever sees the four general families:

* `pop`        → `OffsetWindow` (calculation defaults to `percent_change`)
* `rolling`    → `FrameWindow(preceding = periods - 1)`
* `cumulative` → `FrameWindow(preceding = None /* unbounded */, reset = reset)`

Every violation is an `invalid_datus_extension` diagnostic whose message starts with the exact
key path (e.g. `window.frame.preceding`) and whose hint says how to fix it. `window.base`
(D-DERIVE M2) is checked to be a name here; `ext/derive.py` reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dosi.errors import DiagnosticSink, closest
from dosi.ext.envelope import json_type
from dosi.ext.envelope import show_json as _show
from dosi.ext.window import (
    CALCULATIONS,
    DIRECTIONS,
    FAMILIES,
    FRAME_DEFAULT_ORDER,
    FRAME_DEFAULT_PARTITION,
    FRAME_FUNCTIONS,
    FRAME_KEYS,
    FRAME_W2,
    GRAINS,
    NULLS,
    OFFSET_KEYS,
    ORDER_BY,
    ORDER_DIRECTIONS,
    ORDER_KEYS,
    PARTITION_KEYS,
    PARTITION_MODES,
    RANK_DEFAULT_ORDER,
    RANK_DEFAULT_PARTITION,
    RANK_FUNCTIONS,
    RANK_KEYS,
    RESET_GRAINS,
    SUGARS,
    TWO_ARG_FUNCTIONS,
    UNITS,
    VALUE_DEFAULT_ORDER,
    VALUE_DEFAULT_PARTITION,
    VALUE_FUNCTIONS,
    VALUE_KEYS,
    Direction,
    FrameWindow,
    Grain,
    OffsetWindow,
    OrderSpec,
    PartitionSpec,
    RankWindow,
    ValueWindow,
    WindowSpec,
)

INVALID = "invalid_datus_extension"
NOT_IMPLEMENTED = "not_implemented"

_BARE_STATS: dict[str, str] = {
    "stddev": "stddev_pop or stddev_samp",
    "variance": "var_pop or var_samp",
    "var": "var_pop or var_samp",
    "covar": "covar_pop or covar_samp",
}

#: The longest window offset per granularity: 10,000 years.
MAX_OFFSET_UNITS: dict[str, int] = {
    "second": 10_000 * 366 * 86_400,
    "minute": 10_000 * 366 * 1_440,
    "hour": 10_000 * 366 * 24,
    "day": 10_000 * 366,
    "week": 10_000 * 53,
    "month": 10_000 * 12,
    "quarter": 10_000 * 4,
    "year": 10_000,
}


@dataclass(frozen=True)
class WindowParse:
    """Result of `parse_window`: the IR (None on any error), in-family features used, base flag."""

    spec: WindowSpec | None
    features: tuple[str, ...] = ()
    has_base: bool = False


# --------------------------------------------------------------------------------------------
# Parsing

_UNBOUNDED = "unbounded"

# Which shapes own each top-level key (WM "The window payload"; forbidden keys per sugar).
_TOP_OWNERS: dict[str, tuple[str, ...]] = {
    "offset": ("general", "pop"),
    "calculation": ("general", "pop"),
    "frame": ("general",),
    "rank": ("general",),
    "value": ("general",),
    "function": ("rolling", "cumulative"),
    "periods": ("rolling",),
    "reset": ("cumulative",),
    "require_full_window": ("rolling",),
}
_GENERAL_HINTS: dict[str, str] = {
    "function": "put it inside the family object (window.frame.function), or use "
    '"type": "rolling" / "cumulative"',
    "periods": 'in the general form write window.frame.preceding = periods - 1, or use "type": '
    '"rolling"',
    "reset": 'put it at window.frame.reset, or use "type": "cumulative"',
    "require_full_window": "put it at window.frame.require_full_window",
}


def _present(obj: dict[str, Any], key: str) -> bool:
    """A key counts as set when present and not JSON null (null ≡ absent)."""
    return obj.get(key) is not None


def _alts(options: tuple[str, ...] | list[str]) -> str:
    quoted = [f'"{o}"' for o in options]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_qualified(name: Any) -> bool:
    if not isinstance(name, str) or name.count(".") != 1:
        return False
    return all(part and part == part.strip() for part in name.split("."))


class _Parser:
    def __init__(self, path: str | None, sink: DiagnosticSink) -> None:
        self.path = path
        self.sink = sink
        self.errors = 0
        self.features: list[str] = []

    # -- helpers ---------------------------------------------------------------------------

    def err(
        self, key: str, message: str, hint: str | None = None, candidates: list[str] | None = None
    ) -> None:
        self.errors += 1
        self.sink.error(
            INVALID,
            f"`{key}` {message}",
            path=self.path,
            hint=hint,
            candidates=tuple(candidates or ()),
        )

    def feature(self, name: str) -> None:
        if name not in self.features:
            self.features.append(name)

    def obj(self, key: str, value: Any) -> dict[str, Any] | None:
        if isinstance(value, dict):
            return value
        self.err(key, f"must be a JSON object (got {json_type(value)} {_show(value)})")
        return None

    def deny_unknown(self, key: str, obj: dict[str, Any], allowed: tuple[str, ...]) -> None:
        """Unknown keys inside family / modifier objects are rejected (WIN-PAY-06)."""
        for k in obj:
            if k not in allowed:
                self.err(
                    f"{key}.{k}",
                    f"is not a key of `{key}`: unknown keys are rejected here so that an "
                    "in-family addition this engine predates is never silently dropped",
                    hint=f"allowed keys: {', '.join(allowed)}",
                    candidates=closest(k, allowed),
                )

    def enum(
        self, key: str, value: Any, allowed: tuple[str, ...], hint: str | None = None
    ) -> str | None:
        if isinstance(value, str) and value in allowed:
            return value
        cands = closest(value, allowed) if isinstance(value, str) else []
        self.err(key, f"must be {_alts(allowed)} (got {_show(value)})", hint, cands)
        return None

    def int_min(self, key: str, value: Any, minimum: int, hint: str | None = None) -> int | None:
        if _is_int(value) and value >= minimum:
            return int(value)
        if _is_int(value):
            self.err(key, f"must be an integer >= {minimum} (got {value})", hint)
        else:
            self.err(
                key,
                f"must be an integer >= {minimum} (got {json_type(value)} {_show(value)})",
                hint,
            )
        return None

    def boolean(self, key: str, value: Any) -> bool | None:
        if isinstance(value, bool):
            return value
        self.err(key, f"must be true or false (got {json_type(value)} {_show(value)})")
        return None

    # -- top level -------------------------------------------------------------------------

    def parse(self, raw: Any) -> tuple[WindowSpec | None, bool]:
        if not isinstance(raw, dict):
            self.err(
                "window",
                f"must be a JSON object (got {json_type(raw)} {_show(raw)})",
                hint='e.g. "window": {"type": "pop", "offset": "1 month"}',
            )
            return None, False
        has_base = "base" in raw
        if has_base:
            # D-DERIVE M2 `window.base`: the series is another metric's (ext/derive.py reads
            # the name; the compiler checks what it names)
            base = raw["base"]
            if not isinstance(base, str) or not base.strip():
                self.err(
                    "window.base",
                    f"must be a metric name string (got {json_type(base)} {_show(base)})",
                    hint='e.g. "window": {"base": "close_rate", "rank": {"function": "rank"}}',
                )
            raw = {k: v for k, v in raw.items() if k != "base"}
        start = self.errors
        kind = raw.get("type")
        spec: WindowSpec | None
        if kind is None:
            spec = self.general(raw)
        elif kind == "pop":
            spec = self.pop(raw)
        elif kind == "rolling":
            spec = self.rolling(raw)
        elif kind == "cumulative":
            spec = self.cumulative(raw)
        else:
            self.enum(
                "window.type",
                kind,
                SUGARS,
                hint="omit `type` for the general form (exactly one of offset / frame / rank / "
                "value)",
            )
            spec = None
        if self.errors != start:
            return None, has_base
        return spec, has_base

    def forbid_foreign(self, raw: dict[str, Any], shape: str) -> None:
        """Keys owned by a different shape are rejected (WIN-PAY-07, WIN-POP-03/ROL-04/CUM-03)."""
        where = (
            "in the general form (no `type`)" if shape == "general" else f'with "type": "{shape}"'
        )
        for key, owners in _TOP_OWNERS.items():
            if shape in owners or not _present(raw, key):
                continue
            owner_text = " / ".join(
                "the general form" if o == "general" else f'"type": "{o}"' for o in owners
            )
            hint = _GENERAL_HINTS.get(key) if shape == "general" else None
            self.err(
                f"window.{key}",
                f"is not allowed {where}: it belongs to {owner_text}",
                hint or f"remove `window.{key}`, or write the window as {owner_text}",
            )

    def general(self, raw: dict[str, Any]) -> WindowSpec | None:
        """General form: exactly one of offset / frame / rank / value (WIN-PAY-03)."""
        self.forbid_foreign(raw, "general")
        fams = [f for f in FAMILIES if _present(raw, f)]
        if not fams:
            self.err(
                "window",
                "needs exactly one family (offset, frame, rank or value), or a sugar `type` "
                f"({_alts(SUGARS)}); found none this engine knows",
                hint='e.g. {"frame": {"function": "sum", "preceding": "unbounded"}} or '
                '{"type": "pop", "offset": "1 month"}',
            )
        elif len(fams) > 1:
            self.err(
                "window",
                f"sets {len(fams)} families ({', '.join(fams)}); the general form takes exactly "
                "one of offset / frame / rank / value",
                hint="split the derivations into one metric per family",
            )
        if _present(raw, "calculation") and "offset" not in fams:
            self.err(
                "window.calculation",
                "applies only to the offset family",
                hint="remove window.calculation, or use window.offset",
            )
        specs: list[WindowSpec | None] = []
        for fam in fams:
            if fam == "offset":
                specs.append(self.offset_family(raw, None))
            elif fam == "frame":
                specs.append(self.frame(raw["frame"]))
            elif fam == "rank":
                specs.append(self.rank(raw["rank"]))
            else:
                specs.append(self.value(raw["value"]))
        return specs[0] if len(specs) == 1 else None

    # -- offset ----------------------------------------------------------------------------

    def offset_family(self, raw: dict[str, Any], sugar: str | None) -> OffsetWindow | None:
        off = self.offset(raw["offset"])
        calc: str | None
        if _present(raw, "calculation"):
            calc = self.enum("window.calculation", raw["calculation"], CALCULATIONS)
        elif sugar == "pop":
            calc = "percent_change"
        else:
            self.err(
                "window.calculation",
                "is required with window.offset in the general form (defaults belong to the "
                "pop sugar)",
                hint=f'add "calculation": one of {_alts(CALCULATIONS)}, or write '
                '{"type": "pop", "offset": ...}',
            )
            calc = None
        if off is None or calc is None:
            return None
        count, grain, direction = off
        return OffsetWindow(count, grain, direction, calc, sugar)  # type: ignore[arg-type]

    def offset(self, value: Any) -> tuple[int, Grain, Direction] | None:
        """`"<count> <granularity>"` (one trailing `s` accepted) or `{count, granularity,
        direction?}` (WIN-OFF-01..04, WIN-POP-02)."""
        key = "window.offset"
        if isinstance(value, str):
            return self.offset_string(value)
        if not isinstance(value, dict):
            self.err(
                key,
                f'must be a string like "1 month" or an object {{count, granularity}} '
                f"(got {json_type(value)} {_show(value)})",
            )
            return None
        self.deny_unknown(key, value, OFFSET_KEYS)
        start = self.errors
        count = grain = None
        if _present(value, "count"):
            count = self.int_min(f"{key}.count", value["count"], 1, "shift by at least one unit")
        else:
            self.err(f"{key}.count", "is required (an integer >= 1)")
        if _present(value, "granularity"):
            grain = self.enum(f"{key}.granularity", value["granularity"], GRAINS)
        else:
            self.err(f"{key}.granularity", f"is required ({_alts(GRAINS)})")
        direction = "back"
        if _present(value, "direction"):
            self.feature("window.offset.direction")
            direction = self.enum(f"{key}.direction", value["direction"], DIRECTIONS) or "back"
        if self.errors != start or count is None or grain is None:
            return None
        if not self.offset_in_range(key, count, grain):
            return None
        return count, grain, direction  # type: ignore[return-value]

    def offset_in_range(self, key: str, count: int, grain: str) -> bool:
        """An offset spans at most 10,000 years, so shifted bounds and INTERVALs stay in range
        on every engine (issue 9: range-checked intervals)."""
        most = MAX_OFFSET_UNITS.get(grain)
        if most is not None and count > most:
            self.err(key, f"shifts more than 10,000 years ({most} {grain}s at most)")
            return False
        return True

    def offset_string(self, text: str) -> tuple[int, Grain, Direction] | None:
        key = "window.offset"
        parts = text.split(" ")
        hint = 'write "<count> <granularity>", e.g. "1 month" or "2 weeks", or the object form '
        hint += '{"count": 1, "granularity": "month"}'
        if len(parts) != 2 or not parts[0] or not parts[1]:
            self.err(key, f'must be "<count> <granularity>" (got "{text}")', hint)
            return None
        count_s, unit = parts
        unit_ok = unit if unit in GRAINS else unit[:-1] if unit.endswith("s") else None
        ok = True
        if not count_s.isascii() or not count_s.isdigit():
            self.err(key, f'count "{count_s}" in "{text}" must be an integer >= 1', hint)
            ok = False
        elif len(count_s) > 15:
            self.err(key, f'count in "{text[:40]}" is out of range', hint)
            ok = False
        elif int(count_s) < 1:
            self.err(key, f'count in "{text}" must be >= 1 (got {int(count_s)})', hint)
            ok = False
        if unit_ok not in GRAINS:
            self.err(
                key,
                f'granularity "{unit}" in "{text}" must be {_alts(GRAINS)} (one trailing "s" '
                "accepted)",
                hint,
                closest(unit, GRAINS),
            )
            ok = False
        if not ok or not self.offset_in_range(key, int(count_s), str(unit_ok)):
            return None
        return int(count_s), unit_ok, "back"  # type: ignore[return-value]

    # -- frame -----------------------------------------------------------------------------

    def frame_function(self, key: str, value: Any, allow_two_arg: bool) -> str | None:
        """W1 / W2 / W3 registry levels (WIN-ENUM-07/09/10, WIN-REG-02)."""
        if value is None:
            self.err(key, f"is required (one of {', '.join(FRAME_FUNCTIONS)})")
            return None
        if isinstance(value, str) and value in FRAME_FUNCTIONS:
            if value in FRAME_W2:
                self.feature("window.frame.function (W2 statistical)")
            if value in TWO_ARG_FUNCTIONS:
                if not allow_two_arg:
                    self.err(
                        key,
                        f'"{value}" is a two-argument function: it needs `second`, which only '
                        "the general frame form has",
                        hint=f'write {{"frame": {{"function": "{value}", "preceding": 2, '
                        '"second": "<metric>"}}',
                    )
                    return None
                self.feature("window.frame.function (W3 two-argument)")
            return value
        if isinstance(value, str) and value.lower() in _BARE_STATS:
            self.err(
                key,
                f'bare "{value}" is rejected: it means different things across engines',
                hint=f"use the explicit form {_BARE_STATS[value.lower()]}",
            )
            return None
        if isinstance(value, str) and value in RANK_FUNCTIONS:
            hint = f'"{value}" is a rank-family function: use {{"rank": {{"function": "{value}"}}}}'
        elif isinstance(value, str) and value in VALUE_FUNCTIONS:
            hint = (
                f'"{value}" is a value-family function: use {{"value": {{"function": "{value}"}}}}'
            )
        else:
            hint = None
        self.enum(key, value, FRAME_FUNCTIONS, hint)
        return None

    def preceding(self, key: str, value: Any) -> int | str | None:
        if value == _UNBOUNDED:
            return _UNBOUNDED
        if _is_int(value) and value >= 0:
            return int(value)
        self.err(
            key,
            f'must be an integer >= 0 or "unbounded" (got {json_type(value)} {_show(value)})',
            hint='e.g. "preceding": 2 for a 3-bucket trailing frame, "unbounded" for a running one',
        )
        return None

    def reset(self, key: str, value: Any) -> str | None:
        if value == "day":
            self.err(
                key,
                'cannot be "day": day is the finest grain, so a day reset is never coarser than '
                "the query grain",
                hint=f"use {_alts(RESET_GRAINS)}, or drop the reset",
            )
            return None
        return self.enum(key, value, RESET_GRAINS)

    def frame(self, value: Any) -> FrameWindow | None:
        """General frame form (WIN-FRM-01..13, WIN-19-01/02)."""
        kp = "window.frame"
        raw = self.obj(kp, value)
        if raw is None:
            return None
        self.deny_unknown(kp, raw, FRAME_KEYS)
        start = self.errors
        fn = self.frame_function(f"{kp}.function", raw.get("function"), allow_two_arg=True)
        scope: str | None = None
        if _present(raw, "scope"):
            self.feature("window.frame.scope")
            scope = self.enum(f"{kp}.scope", raw["scope"], ("partition",))
        preceding: int | str | None = None
        if _present(raw, "preceding"):
            preceding = self.preceding(f"{kp}.preceding", raw["preceding"])
        elif not _present(raw, "scope"):
            self.err(
                f"{kp}.preceding",
                'is required: an integer >= 0 or "unbounded" (or set scope: "partition")',
                hint='e.g. "preceding": "unbounded" for a running total',
            )
        reset = self.reset(f"{kp}.reset", raw["reset"]) if _present(raw, "reset") else None
        rfw = False
        if _present(raw, "require_full_window"):
            rfw = bool(self.boolean(f"{kp}.require_full_window", raw["require_full_window"]))
        order: OrderSpec | None = FRAME_DEFAULT_ORDER
        if _present(raw, "order"):
            self.feature("window.frame.order")
            order = self.order(f"{kp}.order", raw["order"], "time")
        partition: PartitionSpec | None = FRAME_DEFAULT_PARTITION
        if _present(raw, "partition"):
            self.feature("window.frame.partition")
            partition = self.partition(f"{kp}.partition", raw["partition"])
        units = "rows"
        if _present(raw, "units"):
            self.feature("window.frame.units")
            units = self.enum(f"{kp}.units", raw["units"], UNITS) or "rows"
        second: str | None = None
        if _present(raw, "second"):
            self.feature("window.frame.second")
            second = self.metric_name(f"{kp}.second", raw["second"])

        if _present(raw, "scope"):
            for k in ("preceding", "reset", "require_full_window", "units", "order"):
                if _present(raw, k):
                    self.err(
                        f"{kp}.{k}",
                        f'cannot be combined with `{kp}.scope: "partition"`: scope makes the '
                        "frame the whole partition (no ORDER BY, no frame clause)",
                        hint=f"remove `{kp}.{k}`, or remove scope for an ordered frame",
                    )
        else:
            if rfw and preceding == _UNBOUNDED:
                self.err(
                    f"{kp}.require_full_window",
                    'cannot be true with preceding "unbounded": an unbounded frame is never '
                    "partial",
                    hint="drop require_full_window, or give preceding a number",
                )
            if units == "range":
                if rfw:
                    self.err(
                        f"{kp}.require_full_window",
                        'cannot be true under units "range": frame-row counting is undefined '
                        "over tie peers",
                        hint='drop require_full_window, or use units "rows"',
                    )
                if preceding is not None and preceding != _UNBOUNDED:
                    self.err(
                        f"{kp}.units",
                        '"range" requires preceding "unbounded" (a value-ordered cumulative frame)',
                        hint='set "preceding": "unbounded", or use units "rows"',
                    )
                if order is not None and order.by != "value":
                    self.err(
                        f"{kp}.units",
                        '"range" requires order.by "value" (a time-ordered series has one row '
                        "per bucket, where RANGE equals ROWS)",
                        hint='add "order": {"by": "value"}, or use units "rows"',
                    )
            if _present(raw, "reset") and order is not None and order.by == "value":
                self.err(
                    f"{kp}.reset",
                    'is not allowed with order.by "value": a time partition without time order '
                    "is incoherent",
                    hint='drop the reset, or order by "time"',
                )
        if fn is not None:
            if fn in TWO_ARG_FUNCTIONS and not _present(raw, "second"):
                self.err(
                    f"{kp}.second",
                    f'is required for the two-argument function "{fn}": name the second input '
                    "series (a plain single-aggregate metric of this model)",
                    hint=f'add "second": "<metric name>" next to "function": "{fn}"',
                )
            elif fn not in TWO_ARG_FUNCTIONS and _present(raw, "second"):
                self.err(
                    f"{kp}.second",
                    f'only applies to covar_pop / covar_samp / corr, not "{fn}"',
                    hint="remove window.frame.second",
                )
        if self.errors != start or fn is None or order is None or partition is None:
            return None
        return FrameWindow(
            function=fn,
            preceding=None if preceding in (None, _UNBOUNDED) else int(preceding),  # type: ignore[arg-type]
            reset=reset,  # type: ignore[arg-type]
            require_full_window=rfw,
            order=order,
            partition=partition,
            units=units,  # type: ignore[arg-type]
            second=second,
            scope="partition" if scope else None,
            sugar=None,
        )

    def metric_name(self, key: str, value: Any) -> str | None:
        if isinstance(value, str) and value.strip() and value == value.strip():
            return value
        self.err(
            key,
            f"must be a metric name: a non-empty string without surrounding spaces (got "
            f"{json_type(value)} {_show(value)})",
        )
        return None

    # -- rank / value ----------------------------------------------------------------------

    def rank(self, value: Any) -> RankWindow | None:
        """Rank family (WIN-RNK-01..05)."""
        parsed = self.ordered_family(
            "rank",
            value,
            RANK_KEYS,
            RANK_FUNCTIONS,
            "value",
            arg=(
                "buckets",
                "ntile",
                "e.g. 4 for quartiles",
                'e.g. {"function": "ntile", "buckets": 4} for quartiles',
            ),
        )
        if parsed is None:
            return None
        fn, buckets, order, part = parsed
        return RankWindow(fn, buckets, order or RANK_DEFAULT_ORDER, part or RANK_DEFAULT_PARTITION)

    def value(self, value: Any) -> ValueWindow | None:
        """Value family (WIN-VAL-01..04)."""
        parsed = self.ordered_family(
            "value",
            value,
            VALUE_KEYS,
            VALUE_FUNCTIONS,
            "time",
            arg=(
                "n",
                "nth_value",
                "n counts from 1 (the first value)",
                'e.g. {"function": "nth_value", "n": 2} for the second value',
            ),
        )
        if parsed is None:
            return None
        fn, n, order, part = parsed
        return ValueWindow(fn, n, order or VALUE_DEFAULT_ORDER, part or VALUE_DEFAULT_PARTITION)

    def ordered_family(
        self,
        family: str,
        value: Any,
        keys: tuple[str, ...],
        functions: tuple[str, ...],
        default_order_by: str,
        arg: tuple[str, str, str, str],
    ) -> tuple[str, int | None, OrderSpec | None, PartitionSpec | None] | None:
        """What the rank and value payloads share: `function`, one integer argument that only
        one function takes (`buckets` for ntile, `n` for nth_value), `order` and `partition`."""
        kp = f"window.{family}"
        self.feature(kp)
        raw = self.obj(kp, value)
        if raw is None:
            return None
        self.deny_unknown(kp, raw, keys)
        start = self.errors
        fn = self.family_function(kp, raw, functions)
        arg_key, arg_fn, range_hint, example = arg
        argument: int | None = None
        if fn == arg_fn:
            if _present(raw, arg_key):
                argument = self.int_min(f"{kp}.{arg_key}", raw[arg_key], 1, range_hint)
            else:
                self.err(
                    f"{kp}.{arg_key}",
                    f'is required with "{arg_fn}" (an integer >= 1)',
                    hint=example,
                )
        elif fn is not None and _present(raw, arg_key):
            self.err(f"{kp}.{arg_key}", f'only applies to "{arg_fn}", not "{fn}"', "remove it")
        order = (
            self.order(f"{kp}.order", raw["order"], default_order_by)
            if _present(raw, "order")
            else None
        )
        part = (
            self.partition(f"{kp}.partition", raw["partition"])
            if _present(raw, "partition")
            else None
        )
        if self.errors != start or fn is None:
            return None
        return fn, argument, order, part

    def family_function(self, kp: str, raw: dict[str, Any], allowed: tuple[str, ...]) -> str | None:
        key = f"{kp}.function"
        if not _present(raw, "function"):
            self.err(key, f"is required (one of {', '.join(allowed)})")
            return None
        value = raw["function"]
        hint = None
        if isinstance(value, str) and value in FRAME_FUNCTIONS:
            hint = f'"{value}" is a frame-family function: use {{"frame": {{"function": "{value}", ...}}}}'
        elif isinstance(value, str) and value in RANK_FUNCTIONS + VALUE_FUNCTIONS:
            fam = "rank" if value in RANK_FUNCTIONS else "value"
            hint = f'"{value}" belongs to the {fam} family: use window.{fam}'
        return self.enum(key, value, allowed, hint)

    # -- modifiers -------------------------------------------------------------------------

    def order(self, key: str, value: Any, default_by: str) -> OrderSpec | None:
        """`{by, direction, nulls}`; direction defaults per `by` (WIN-MOD-01, WIN-19-03)."""
        raw = self.obj(key, value)
        if raw is None:
            return None
        self.deny_unknown(key, raw, ORDER_KEYS)
        start = self.errors
        by = self.enum(f"{key}.by", raw["by"], ORDER_BY) if _present(raw, "by") else default_by
        direction: str | None = None
        if _present(raw, "direction"):
            direction = self.enum(f"{key}.direction", raw["direction"], ORDER_DIRECTIONS)
        elif by is not None:
            direction = "asc" if by == "time" else "desc"
        nulls: str | None = None
        if _present(raw, "nulls"):
            self.feature("window.order.nulls")
            nulls = self.enum(f"{key}.nulls", raw["nulls"], NULLS)
        if self.errors != start or by is None or direction is None:
            return None
        return OrderSpec(by, direction, nulls)  # type: ignore[arg-type]

    def partition(self, key: str, value: Any) -> PartitionSpec | None:
        """`{mode, exclude}`; `exclude` only with `query_dimensions_except` (WIN-MOD-02/03)."""
        raw = self.obj(key, value)
        if raw is None:
            return None
        self.deny_unknown(key, raw, PARTITION_KEYS)
        start = self.errors
        mode: str | None = None
        if _present(raw, "mode"):
            mode = self.enum(f"{key}.mode", raw["mode"], PARTITION_MODES)
        else:
            self.err(f"{key}.mode", f"is required ({_alts(PARTITION_MODES)})")
        exclude: tuple[str, ...] = ()
        except_mode = "query_dimensions_except"
        if _present(raw, "exclude"):
            if mode is not None and mode != except_mode:
                self.err(
                    f"{key}.exclude",
                    f'only pairs with mode "{except_mode}" (mode is "{mode}")',
                    hint=f'remove exclude, or set "mode": "{except_mode}"',
                )
            else:
                exclude = self.exclude(f"{key}.exclude", raw["exclude"])
        elif mode == except_mode:
            self.err(
                f"{key}.exclude",
                f'is required with mode "{except_mode}": list the dimensions to leave out of the '
                'partition as "dataset.field"',
            )
        if self.errors != start or mode is None:
            return None
        return PartitionSpec(mode, exclude)  # type: ignore[arg-type]

    def exclude(self, key: str, value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or not value:
            self.err(
                key,
                "must be a non-empty array of qualified dimension names "
                f"(got {json_type(value)} {_show(value)})",
                hint='e.g. "exclude": ["orders.region"]',
            )
            return ()
        out: list[str] = []
        for i, item in enumerate(value):
            if _is_qualified(item):
                out.append(item)
            else:
                self.err(
                    f"{key}[{i}]",
                    f'must be a qualified "dataset.field" name (got {_show(item)}); the bare '
                    "field spelling is reserved",
                    hint='e.g. "orders.region"',
                )
        return tuple(out)

    # -- sugars ----------------------------------------------------------------------------

    def pop(self, raw: dict[str, Any]) -> OffsetWindow | None:
        """`pop` → offset, calculation defaulting to percent_change (WIN-POP-01..04)."""
        self.forbid_foreign(raw, "pop")
        if not _present(raw, "offset"):
            self.err(
                "window.offset",
                'is required with "type": "pop"',
                hint='e.g. "offset": "1 month" or {"count": 1, "granularity": "year"}',
            )
            if _present(raw, "calculation"):
                self.enum("window.calculation", raw["calculation"], CALCULATIONS)
            return None
        return self.offset_family(raw, "pop")

    def rolling(self, raw: dict[str, Any]) -> FrameWindow | None:
        """`rolling` → frame with preceding = periods - 1 (WIN-ROL-01..04)."""
        self.forbid_foreign(raw, "rolling")
        start = self.errors
        fn = self.frame_function("window.function", raw.get("function"), allow_two_arg=False)
        periods: int | None = None
        if _present(raw, "periods"):
            periods = self.int_min(
                "window.periods", raw["periods"], 1, "periods counts buckets, current included"
            )
        else:
            self.err("window.periods", 'is required with "type": "rolling" (an integer >= 1)')
        rfw = False
        if _present(raw, "require_full_window"):
            rfw = bool(self.boolean("window.require_full_window", raw["require_full_window"]))
        if self.errors != start or fn is None or periods is None:
            return None
        return FrameWindow(fn, periods - 1, None, rfw, sugar="rolling")

    def cumulative(self, raw: dict[str, Any]) -> FrameWindow | None:
        """`cumulative` → unbounded frame, optional reset (WIN-CUM-01..03)."""
        self.forbid_foreign(raw, "cumulative")
        start = self.errors
        fn = self.frame_function("window.function", raw.get("function"), allow_two_arg=False)
        reset = self.reset("window.reset", raw["reset"]) if _present(raw, "reset") else None
        if self.errors != start or fn is None:
            return None
        return FrameWindow(fn, None, reset, sugar="cumulative")  # type: ignore[arg-type]


def parse_window(raw: Any, *, path: str | None, sink: DiagnosticSink) -> WindowParse:
    """Validate a `window` payload and desugar it to the general IR.

    Diagnostics go to `sink` (`invalid_datus_extension` per violation); the spec is `None` whenever anything was reported, so callers fall back to
    the plain base aggregate (ENV-CAR-09). `features` lists the in-family shapes used
    (`registry.WINDOW_FEATURES`) for the version gate.
    """
    parser = _Parser(path, sink)
    spec, has_base = parser.parse(raw)
    return WindowParse(spec, tuple(parser.features), has_base)
