"""The ``_delta_log`` directory: its files, its JSON commits and their actions.

Names of the log's files and their kinds (``log_files``), JSON parsed as ``json.loads`` does
(``json_text``), a file action's identity as Delta replays it (``file_identity``), the actions
themselves (``actions``), the ``metaData`` and ``protocol`` actions checked (``metadata``) and the
JSON commits with their commit infos (``commits``).

May import: nothing else in ``python_ops.delta`` (``tests/unit/test_layers.py`` holds the order).
"""
