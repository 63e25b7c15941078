"""Commits this project makes: through delta-rs, by hand, or by Delta's own writer.

The delta-rs writer opened for a commit (``writer``), schema and docs edits (``schema_edits``), the
commits written here by hand (``log_commit``), and Delta's own writer on this machine, a child
process started only when a table needs it (``local_writer``, ``local_writer_worker``).

May import: ``log``, ``table``, ``state`` (``tests/unit/test_layers.py`` holds the order).
"""
