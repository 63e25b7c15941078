"""Integration tier: the ops on real engines (Sail, classic JVM Spark), Delta tables, S3 (moto).

No dbt runs here (``tests/e2e``); decisions and parsing without an engine are in ``tests/unit``.
"""
