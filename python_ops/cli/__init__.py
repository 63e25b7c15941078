"""The command line, ``python -m python_ops``.

``main`` has one subcommand per op; ``maintain`` maintains a whole dbt project read from its
manifest.
"""
