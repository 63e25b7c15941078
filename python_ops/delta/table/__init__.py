"""What a table declares of itself: properties, protocol features, statistics.

The table's properties and their defaults (``properties``), the retentions this project records on
it (``recorded_retentions``), every table feature and what each op does about it (``features``), the
gate that applies them to a table's protocol (``protocol``), per-file statistics (``stats``) and one
SQL condition over partition columns (``partition_scope``).

May import: ``log`` (``tests/unit/test_layers.py`` holds the order).
"""
