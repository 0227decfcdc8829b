"""Plain-Python semantics of the D-WINDOW 1.14 shapes (the window roadmap's rest), for the
value tests: frames with following bounds, GROUPS units and frame exclusion over the rows of
a partition, the regression aggregates (PostgreSQL's definitions: NULL without spread in x)
and the SQL percentiles. Never computed by an engine."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from wm_common import Key, agg, key_date

Row = tuple[Key, Any, Any]  # key, y (the metric), x (the second series)


def regr(fn: str, ys: Sequence[Any], xs: Sequence[Any]) -> Any:
    """REGR_*(y, x) over the pairs where both are non-NULL."""
    pairs = [(y, x) for y, x in zip(ys, xs, strict=True) if y is not None and x is not None]
    n = len(pairs)
    if fn == "regr_count":
        return n
    if n == 0:
        return None
    my = sum(p[0] for p in pairs) / n
    mx = sum(p[1] for p in pairs) / n
    sxx = sum((p[1] - mx) ** 2 for p in pairs)
    syy = sum((p[0] - my) ** 2 for p in pairs)
    sxy = sum((p[0] - my) * (p[1] - mx) for p in pairs)
    simple = {"regr_avgx": mx, "regr_avgy": my, "regr_sxx": sxx, "regr_syy": syy}
    if fn in simple:
        return simple[fn]
    if fn == "regr_sxy":
        return sxy
    if sxx == 0:
        return None
    slope = sxy / sxx
    if fn == "regr_slope":
        return slope
    if fn == "regr_intercept":
        return my - slope * mx
    assert fn == "regr_r2"
    return 1.0 if syy == 0 else sxy * sxy / (sxx * syy)


def percentile(fn: str, values: Sequence[Any], fraction: float | None) -> Any:
    """PERCENTILE_CONT (linear interpolation) / PERCENTILE_DISC (the first value whose
    cumulative share reaches the fraction) over the non-NULL values; median is cont at 0.5."""
    vals = sorted(v for v in values if v is not None)
    if not vals:
        return None
    p = 0.5 if fn == "median" else fraction
    assert p is not None
    if fn == "percentile_disc":
        return vals[max(math.ceil(p * len(vals)) - 1, 0)]
    pos = p * (len(vals) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return vals[lo] + (pos - lo) * (vals[hi] - vals[lo])


def aggregate(fn: str, ys: Sequence[Any], xs: Sequence[Any], fraction: float | None) -> Any:
    if fn.startswith("regr_"):
        return regr(fn, ys, xs)
    if fn in ("percentile_cont", "percentile_disc", "median"):
        return percentile(fn, ys, fraction)
    return agg(fn, list(ys), list(xs) if fn in ("covar_pop", "covar_samp", "corr") else None)


def framed(
    base: dict[Key, Any],
    fn: str,
    preceding: int | None,
    following: int | None = 0,
    *,
    units: str = "rows",
    exclusion: str | None = None,
    partition: Callable[[Key], Any] = lambda k: k[:-1],
    order: Callable[[Key], Any] = key_date,
    tiebreak: Callable[[Key], Any] = lambda k: (),
    second: dict[Key, Any] | None = None,
    fraction: float | None = None,
    require_full: bool = False,
) -> dict[Key, Any]:
    """`fn` over each row's frame: `preceding` / `following` rows (ROWS, rows sorted by
    order then tiebreak) or peer groups (GROUPS, peers share `order`); None = unbounded;
    `exclusion` drops the current row, its peers, or its peers but itself."""
    parts: dict[Any, list[Key]] = {}
    for k in base:
        parts.setdefault(partition(k), []).append(k)
    out: dict[Key, Any] = {}
    for keys in parts.values():
        keys.sort(key=lambda k: (order(k), _sortable(tiebreak(k))))
        # peers share the order key: the time bucket (GROUPS), the full sort key (ROWS, whose
        # order the tie-breakers make total)
        if units == "groups":
            peers = [order(k) for k in keys]
            ranks = {g: i for i, g in enumerate(dict.fromkeys(peers))}
            pos = [ranks[g] for g in peers]
        else:
            peers = [(order(k), tiebreak(k)) for k in keys]
            pos = list(range(len(keys)))
        for i, k in enumerate(keys):
            lo = -math.inf if preceding is None else pos[i] - preceding
            hi = math.inf if following is None else pos[i] + following
            frame = [j for j in range(len(keys)) if lo <= pos[j] <= hi]
            if require_full and len(frame) < (preceding or 0) + 1 + (following or 0):
                out[k] = None
                continue
            if exclusion == "current_row":
                frame = [j for j in frame if j != i]
            elif exclusion == "group":
                frame = [j for j in frame if peers[j] != peers[i]]
            elif exclusion == "ties":
                frame = [j for j in frame if j == i or peers[j] != peers[i]]
            ys = [base[keys[j]] for j in frame]
            xs = [second[keys[j]] for j in frame] if second is not None else [None] * len(ys)
            out[k] = len(frame) if fn == "count" else aggregate(fn, ys, xs, fraction)
    return out


def _sortable(t: tuple[Any, ...]) -> tuple[Any, ...]:
    """NULLs last, as the engine's tie-breakers sort them."""
    return tuple((v is None, "" if v is None else v) for v in t)


def navigate(
    base: dict[Key, Any],
    fn: str,
    n: int | None = None,
    *,
    ignore_nulls: bool = False,
    partition: Callable[[Key], Any] = lambda k: k[:-1],
) -> dict[Key, Any]:
    """first / last / nth value of each time-ordered partition, NULL buckets skipped with
    `ignore_nulls`."""
    parts: dict[Any, list[Key]] = {}
    for k in base:
        parts.setdefault(partition(k), []).append(k)
    out: dict[Key, Any] = {}
    for keys in parts.values():
        keys.sort(key=key_date)
        vals = [base[k] for k in keys]
        if ignore_nulls:
            vals = [v for v in vals if v is not None]
        if fn == "first_value":
            got = vals[0] if vals else None
        elif fn == "last_value":
            got = vals[-1] if vals else None
        else:
            assert n is not None
            got = vals[n - 1] if len(vals) >= n else None
        for k in keys:
            out[k] = got
    return out
