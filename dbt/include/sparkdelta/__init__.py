"""Macros of the sparkdelta adapter plugin (the ``dbt`` macro namespace)."""

import os

PACKAGE_PATH = os.path.dirname(__file__)
