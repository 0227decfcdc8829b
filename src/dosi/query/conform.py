"""D-CONFORM: a conformed edge is not a path (datus-extensions §3 D-CONFORM, CONF-11).

A `relationship.field` reference walks a relationship; a many_to_many edge pairs two facts and
has no row on the other side to walk to, so naming it is `invalid_relationship_path`.
"""

from __future__ import annotations

from dosi.errors import QueryError
from dosi.ir.conform import conformity
from dosi.ir.model import ModelIr


def check_not_conformed_path(model: ModelIr, name: str) -> None:
    """Raise when `name` (`prefix.field`) walks a conformed relationship."""
    prefix, _, column = name.partition(".")
    edge = conformity(model).edge(prefix)
    if edge is None:
        return
    spellings = [
        f"{ds}.{column}"
        for ds in (edge.from_dataset, edge.to_dataset)
        if column in model.datasets[ds].fields
    ]
    raise QueryError(
        "invalid_relationship_path",
        f"`{name}` walks relationship `{edge.name}`, a conformed many_to_many pairing of "
        f"`{edge.from_dataset}` and `{edge.to_dataset}`: it is never joined, so no row lies "
        "on its other side",
        candidates=spellings,
        hint="name the field by its dataset (dataset.field); a paired column is read by each "
        "fact in its own spelling",
    )
