"""Where VACUUM's candidates come from: a listing, an inventory, or the log (LITE).

A parallel listing with Delta's hidden-name rules (``listing``), sizes and times only where needed
(``file_stats``), an inventory report (``inventory``), the log's expired ``remove`` actions for LITE
(``lite``), LITE's continuation state ``_last_vacuum_info`` (``state``), and the choice between FULL
and LITE (``mode``).

May import: ``rule`` (``tests/unit/test_layers.py`` holds the order).
"""
