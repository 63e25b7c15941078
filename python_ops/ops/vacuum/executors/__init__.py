"""VACUUM on a Spark cluster: listing and deletes in executor tasks.

Listing (``executor_listing``), deleting (``executor_delete``), and the selection and deletion
composed there (``cluster``).

May import: ``rule``, ``sources``, ``deleting`` (``tests/unit/test_layers.py`` holds the order). The
package's own modules (``candidates``, ``plan``, ``execute``, ``run``) sit above every room.
"""
