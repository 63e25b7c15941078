"""Delta table maintenance in plain Python (never imports dbt).

Layers, each importing only from those before it (``tests/unit/test_layers.py`` checks this):
``errors`` and ``values`` (named errors, validated numbers); ``storage`` (files under a table root:
local, ``pyarrow.fs``, S3) and ``spark_sessions`` (the embedded Sail server, classic Spark) with
``delta_sql`` (Delta's own SQL on an engine); ``delta`` (the log, protocol features, table
properties, the delta-rs writer); ``ops`` (VACUUM, log cleanup, health, OPTIMIZE); ``maintenance``
(per-model config, the op registry, due decisions, history, the runner, targets from a dbt manifest,
reports); ``cli``.
"""
