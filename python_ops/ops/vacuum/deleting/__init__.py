"""VACUUM's deletes on this machine: files in a bounded pool, then directories.

The selected files in a bounded pool, then directories deepest first (``delete``), and a directory a
writer filled meanwhile kept, not an error (``kept``).

May import: ``rule``, ``sources`` (``tests/unit/test_layers.py`` holds the order).
"""
