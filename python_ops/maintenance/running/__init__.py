"""Running maintenance: the runner, one session per command, upkeep, the report.

The runner (``runner``) over one maintenance session (``session``), what a run did
(``run_results``), the post-hook's skip (``build_skip``), the history's own upkeep
(``history_upkeep``) and the report (``report``).

May import: every other room (``tests/unit/test_layers.py`` holds the order).
"""
