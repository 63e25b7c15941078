"""Maintenance as the macros run it: one table's op, the post-hook, run-operations.

One op on one model's table (``table_ops``), the post-hook and the run-operations
(``run_operations``), the build facts they read (``build_clock``), the advisor (``advisor_bridge``),
the objects the adapter's methods call (``maintenance_bridge``) and maintenance state in ``dbt
docs`` (``catalog_stats``).

May import: ``common``, ``engines``, ``configs``, ``bridge``, ``materializing``
(``tests/unit/test_layers.py`` holds the order). The adapter's own modules (``impl``,
``connections``, ``python_models``) sit above every room.
"""
