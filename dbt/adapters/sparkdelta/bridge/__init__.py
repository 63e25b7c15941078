"""How maintenance reaches dbt: its connection, where tables are, the session.

SQL and sessions through dbt's connection (``dbt_connection``), where a model's table is
(``locator``), the history's store and catalog place (``history_catalog``), a maintenance session as
dbt runs it (``dbt_session``), and which models a run-operation works on, in dbt and in a child
process (``dbt_selector``, ``selection_cli``).

May import: ``common``, ``engines``, ``configs`` (``tests/unit/test_layers.py`` holds the order).
"""
