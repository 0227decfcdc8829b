"""Access layer: who the caller is and what the caller may see (issue 30).

`identity` holds users and API tokens (groups, attributes, hashed secrets); `policy` reads
the policy file (per group: visible metrics, dimensions and datasets, row filters);
`row_filter` compiles a row filter against the model with the user's attributes bound as
typed literals; `scope` turns a model, a policy set and a user into the model that user
queries (every dataset's base relation wrapped in its row filter) and the visibility checks;
`audit` writes one structured line per request (docs/access-policies.md).

Layer: just below the facade (`dosi.engine`), above `dosi.analysis` and `dosi.catalog`. May
import `dosi.errors`, `dosi.sql` (the relation helpers), `dosi.query` and `dosi.ir`; never
`dosi.engine` or `dosi.frontends`.
"""

from dosi.access.identity import IdentityStore, UserContext, hash_secret
from dosi.access.policy import AccessConfig, Policy, PolicySet, load_access
from dosi.access.scope import AccessScope, scope_for

__all__ = [
    "AccessConfig",
    "AccessScope",
    "IdentityStore",
    "Policy",
    "PolicySet",
    "UserContext",
    "hash_secret",
    "load_access",
    "scope_for",
]
