"""What the materializations call: checks before the SQL, clustering, incrementals.

The checks before a model's SQL runs (``build_check``), a model's liquid clustering (``clustering``)
and the incremental pieces Sail lacks (``incremental``).

May import: ``common``, ``engines``, ``configs``, ``bridge`` (``tests/unit/test_layers.py`` holds
the order).
"""
