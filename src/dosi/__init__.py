"""dosi: a semantic-layer engine for Apache Ossie models with the DATUS extensions."""

from dosi.errors import Diagnostic, ExecuteError, ModelError, OsiError, QueryError

__version__ = "0.1.0"

__all__ = [
    "Diagnostic",
    "ExecuteError",
    "ModelError",
    "OsiError",
    "QueryError",
    "__version__",
]
