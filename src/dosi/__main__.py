"""`python -m dosi`: the `dosi` command line."""

from dosi.frontends.cli import main

if __name__ == "__main__":
    main()
