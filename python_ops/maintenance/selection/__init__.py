"""Which models and where their tables are: dbt nodes, locations, selection.

The dbt nodes as ``ModelTarget`` values with their configs (``targets``), where tables live
(``locations``, ``catalog_file``), and dbt's selection resolved (``selected_models``,
``selection_resolver``).

May import: ``configuration``, ``facts`` (``tests/unit/test_layers.py`` holds the order).
"""
