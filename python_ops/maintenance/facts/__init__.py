"""What a build did, as the post-hook sees it: its start, its writes, the layout.

The build's start (``build_start``), what it wrote (``build_writes``) and whether the table's files
are still those its last clustering wrote (``layout``). Nothing here decides what is deleted:
VACUUM's protected set and log cleanup's selection always come from the table's own log.

May import: ``configuration`` (``tests/unit/test_layers.py`` holds the order).
"""
