"""dosi: a semantic-layer engine for Apache Ossie models with the DATUS extensions."""

from dosi.access import UserContext, load_access
from dosi.engine import Engine, QueryResult, validate
from dosi.errors import AccessError, Diagnostic, ExecuteError, ModelError, OsiError, QueryError
from dosi.execute.cancel import CancellationToken
from dosi.ext import DATUS_EXT, DATUS_EXT_VERSION

__version__ = "0.1.0"
SPEC_VERSION = "0.2.0.dev0"

__all__ = [
    "DATUS_EXT",
    "DATUS_EXT_VERSION",
    "SPEC_VERSION",
    "AccessError",
    "CancellationToken",
    "Diagnostic",
    "Engine",
    "ExecuteError",
    "ModelError",
    "OsiError",
    "QueryError",
    "QueryResult",
    "UserContext",
    "__version__",
    "load_access",
    "validate",
]
