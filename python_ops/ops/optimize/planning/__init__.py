"""OPTIMIZE's plan (what is worth rewriting) and what each commit did.

What is worth rewriting, planned as Delta's ``OptimizeExecutor`` plans (``plan``), and what each
commit did, summed into the result (``outcome``).

May import: ``sorting`` (``tests/unit/test_layers.py`` holds the order).
"""
