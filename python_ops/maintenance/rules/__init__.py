"""Each op's due rule on a table's state, and the words that give the reason.

VACUUM's reclaimable bound (``reclaim``, ``empty_origin``, ``untracked_bound``), the log's bounds
since a version (``log_bounds``, ``known_table``), every op's rule (``due_rules``) and the words
that give a reason (``wording``).

May import: ``configuration``, ``facts``, ``selection``, ``records`` (``tests/unit/test_layers.py``
holds the order).
"""
