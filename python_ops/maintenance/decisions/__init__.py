"""Whether an op is due, decided for a command and for the post-hook.

For a command (``due``, through the registry) and for the post-hook from what the build wrote
(``build_decisions``).

May import: every room below it: ``configuration`` to ``runs`` (``tests/unit/test_layers.py`` holds
the order).
"""
