"""What every room of the adapter shares: the runtime and the events to the user.

The state kept across dbt invocations and threads (``runtime``) and the events maintenance tells the
dbt user through (``maintenance_events``).

May import: nothing else in the adapter (``tests/unit/test_layers.py`` holds the order).
"""
