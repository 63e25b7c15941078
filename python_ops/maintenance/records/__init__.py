"""The maintenance history: what each op run did, written and read back.

What each op run did (``outcomes``), the history table and its reads (``history``, ``history_read``,
``history_last``, ``history_summary``).

May import: ``configuration``, ``facts``, ``selection`` (``tests/unit/test_layers.py`` holds the
order).
"""
