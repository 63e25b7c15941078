"""A table's state at one version, replayed from its commits and checkpoints.

Checkpoints read as Arrow (``parquet_file``, ``file_columns``, ``checkpoint_reader``), the snapshot
(``snapshot``), the paths VACUUM protects (``file_paths``), a version's checksum file
(``version_checksum``), deletion vectors and the rows they delete (``deletion_vectors``,
``deletes``), and the partition directories a condition selects (``partitions``).

May import: ``log``, ``table`` (``tests/unit/test_layers.py`` holds the order).
"""
