"""OPTIMIZE's writers: ours (rewrite and commit here) and Delta's own statements.

The two writers of a plan. Ours: each bin or partition rewritten and committed here
(``native``, ``own_compact``, ``rewrite_commit``). Delta's: its own statements run on an engine
that has Delta (``delta_statement``, ``delta_run``), and liquid clustering (``clustering``).

May import: ``sorting``, ``planning`` (``tests/unit/test_layers.py`` holds the order). The package's
``execute`` sits above every room.
"""
