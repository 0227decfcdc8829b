"""D-DERIVE query checks: a compose grouped outside its conformed dimension set is
`unconformed_dimension`, naming the leaf member that cannot reach the dimension
(DRV-CMP-06, DRV-NEST-06)."""

from __future__ import annotations

from dosi.errors import QueryError
from dosi.query.resolve import ResolvedQuery


def check_conformed(rq: ResolvedQuery) -> None:
    for m in rq.planned_metrics:
        d = m.derive
        if d is None or d.conformed_dimensions is None:
            continue
        conformed = set(d.conformed_dimensions)
        for dim in rq.dims:
            f = dim.field
            if f is None or f.qualified in conformed:
                continue
            missing = [leaf for leaf, dims in d.leaf_dimensions if f.qualified not in dims]
            raise QueryError(
                "unconformed_dimension",
                f'dimension "{f.qualified}" is not conformed for derived metric "{m.name}": '
                f"member(s) {', '.join(missing)} have no many-to-one path to `{f.dataset}`",
                metrics=[m.name],
                candidates=sorted(conformed),
                hint="group by a dimension every member reaches (see conformed_dimensions in "
                "`dosi list metrics`), or query the members separately",
            )
