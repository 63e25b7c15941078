"""Deletion-vector purge: rewrite the files of partitions whose soft-deleted rows pass a share.

A table with deletion vectors keeps deleted rows in its data files until they are rewritten.
``options`` -> ``plan`` (the partitions whose deleted share is above the threshold, default
Delta's OPTIMIZE ``optimize.maxDeletedRowsRatio``, 0.05, from the log alone) -> ``execute``
(Delta's ``REORG TABLE ... [WHERE <those partitions>] APPLY (PURGE)`` where the engine has
Delta, ``statement``; else written and committed here, ``native``) -> ``PurgeResult``,
composed and audited by ``run.purge``. VACUUM later reclaims the replaced files.
"""

from python_ops.ops.purge.native import WRITER_NATIVE, purge_natively
from python_ops.ops.purge.options import DEFAULT_DELETED_RATIO, PurgeOptions
from python_ops.ops.purge.plan import PurgePlan, plan_purge
from python_ops.ops.purge.run import purge
from python_ops.ops.purge.statement import WRITER_REORG, purge_statement

__all__ = [
    "DEFAULT_DELETED_RATIO",
    "WRITER_NATIVE",
    "WRITER_REORG",
    "PurgeOptions",
    "PurgePlan",
    "plan_purge",
    "purge",
    "purge_natively",
    "purge_statement",
]
