"""Model exporters: an Ossie model with DATUS extensions -> other tools' formats.

Layer: authoring, beside `dosi.importers`, below the frontends. Exporters read documents with
`dosi.model`, registry facts from `dosi.ext`, and check what they write with the compiler.
"""
