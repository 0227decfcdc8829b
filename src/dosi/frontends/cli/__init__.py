"""The `dosi` command line."""

from dosi.frontends.cli.app import cli, main

__all__ = ["cli", "main"]
