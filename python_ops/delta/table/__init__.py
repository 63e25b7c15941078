"""What a table declares of itself: properties, protocol features, statistics.

What a table declares of itself, independent of any one version's files: its properties and
their defaults (``properties``), the retentions this project records on it
(``recorded_retentions``), the protocol's features each op understands (``protocol``), per-file
statistics (``stats``) and one SQL condition over partition columns (``partition_scope``).

May import: ``log`` (``tests/unit/test_layers.py`` holds the order).
"""
