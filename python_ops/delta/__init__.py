"""The Delta table format: what a table is, read from its log, and how commits are written.

Four rooms, lowest first (``tests/unit/test_layers.py`` holds the order):

- ``log``: the ``_delta_log`` directory's files, JSON commits and their actions, checked strictly;
- ``table``: what a table declares of itself: properties and retentions, the protocol gate (which
  table features each op supports), file statistics, partition conditions;
- ``state``: a table's state at one version, replayed from commits and Parquet checkpoints: the
  snapshot, the paths VACUUM protects, checksums, deletion vectors, partition directories;
- ``writing``: commits this project makes, through delta-rs, by hand, or by Delta's own writer
  in a child process.

Nothing here lists or deletes data files: that is the ops' work.
"""
