"""Checks of what the user wrote: profile, model configs, macro arguments.

A profile target (``profile_checks``), the project's maintenance configs before the first node
(``config_preflight``), dbt-databricks's config names (``config_aliases``), a run-operation's
misspelt argument (``macro_arguments``) and Sail's known failures named with the model's line
(``engine_limits``).

May import: ``common`` (``tests/unit/test_layers.py`` holds the order).
"""
