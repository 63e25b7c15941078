"""The Z-order in bounded memory: ranks, an external sort, target-sized files.

Integer ranks and range ids (``integer_ranks``, ``zorder_ranges``), a partition's rows as one stream
(``partition_batches``), the external sort and its budget, heap and spill directory
(``external_sort``, ``memory_budget``, ``heap_reuse``, ``spill_directory``), target-sized output
files (``clustered_output``) and one partition's Z-order (``zorder``).

May import: nothing else in ``python_ops.ops.optimize`` (``tests/unit/test_layers.py`` holds the
order).
"""
