"""Model importers: Cube, LookML and dbt projects -> Ossie documents with DATUS extensions.

Layer: authoring, below the frontends and above the engine's own layers. Importers build
plain documents with `common.py`, render them with `yaml_writer.py`, and check them with the
compiler (`dosi.compiler`); they read DATUS facts from `dosi.ext` only. Nothing below this
package imports it.
"""
