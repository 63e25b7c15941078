"""The memory budget of our Z-order's sort (``external_sort``), readable without loading it.

The config (``maintenance_memory_budget``) and the CLI (``--memory-budget``) read the default
here, so neither imports Arrow to know it.
"""

from __future__ import annotations

DEFAULT_MEMORY_BUDGET = 1 << 30  # 1 GiB: rows, keys and buffers of one partition's sort
