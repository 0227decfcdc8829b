"""Plan records -> plan nodes: `dag.build_dag` makes every choice that changes the SQL a node;
one module per feature that shapes the nodes below an aggregate (`lod_field`,
`stream_window`). Layer: logical plan (`dosi.plan`); imports what `dosi.plan` may."""
