"""VACUUM's rule as values: options, retention, and which listed paths are deleted.

The options and their enums (``options``), the retention and Delta's safety check (``retention``),
and the selection program that decides which listed paths are deleted, in Arrow or on Spark
(``selection``).

May import: nothing else in ``python_ops.ops.vacuum`` (``tests/unit/test_layers.py`` holds the
order).
"""
