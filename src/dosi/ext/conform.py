"""D-CONFORM payload rules: the `cardinality` key of a Relationship (datus-extensions §3
D-CONFORM, CHECKLIST CONF-01/02, JOIN-06).

Only the payload shape lives here; the pairing itself (classes, is_time / datatype agreement,
one column per dataset per class) is checked by `dosi.compiler.conform` against the model.
"""

from __future__ import annotations

from typing import Any, Literal

Cardinality = Literal["many_to_one", "many_to_many"]
CARDINALITIES: tuple[Cardinality, ...] = ("many_to_one", "many_to_many")

CARDINALITY_HINT = (
    'write "cardinality": "many_to_many" to pair two fact tables on shared dimensions, or '
    '"many_to_one" (the default) for an ordinary foreign-key edge'
)

JOIN_TYPE_ON_CONFORMED_HINT = (
    "remove join_type: a many_to_many edge is never joined row by row (each fact aggregates "
    "alone and the branches merge on the paired columns), so a join type has nothing to apply to"
)


def cardinality_value(value: Any) -> Cardinality | None:
    """The declared cardinality, or None when the value is not one of the two names."""
    if isinstance(value, str) and value in CARDINALITIES:
        return value  # type: ignore[return-value]
    return None


def is_conformed(cardinality: str | None) -> bool:
    """`many_to_many` declares a conformed pairing; absent means the many_to_one default."""
    return cardinality == "many_to_many"
