"""The maintenance ops, one module each, each taking the table first and returning a frozen result.

``vacuum`` (untracked and expired files), ``log_cleanup`` (expired ``_delta_log`` files and
checkpoints), ``health`` (what maintenance a table needs, from its log alone) and ``optimize``
(compaction and Z-order: ``plan``, ``execute``, ``zorder``). ``results`` holds the result
dataclasses; ``audit`` writes the audit log line every destructive op leaves. Every op asks
``python_ops.delta.table.protocol`` before it lists, writes or deletes anything.
"""
