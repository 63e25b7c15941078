"""How one op runs for one model: the registry, its call, its checked options.

The op registry (``registry``), each op's call with the model's settings (``op_runs``), run options
checked once (``run_options``), and ``auto`` clustering columns chosen by the advisor
(``auto_columns``).

May import: ``configuration``, ``facts``, ``selection``, ``records``, ``rules``
(``tests/unit/test_layers.py`` holds the order).
"""
