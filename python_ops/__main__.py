"""``python -m python_ops``: the ops' command line.

A VACUUM that runs in this process (no engine, no inventory) prepares the process before
anything imports pyarrow (``python_ops.ops.lean_arrow``): it blocks numpy (pyarrow decides at its
import whether numpy is there; without it the process is about 10 MB and 0.1 s lighter), names
the C library's allocator as Arrow's pool, and fixes glibc's mmap threshold (large transient
buffers go back to the system), all for the whole process. Decided from the arguments alone,
before ``cli.main`` (which imports pyarrow) is loaded; anything unclear leaves all three alone.
"""

import itertools
import sys
from collections.abc import Sequence

from python_ops.delta.state.parquet_file import decode_on_threads
from python_ops.ops.lean_arrow import (
    block_numpy_for_process,
    fix_mmap_threshold_for_process,
    system_pool_for_process,
)


def engine_free_vacuum(argv: Sequence[str]) -> bool:
    """Whether the arguments ask for a VACUUM in this process, without engine or inventory."""
    engine = "in-process"
    rest = list(argv)
    while rest and rest[0].startswith("-"):  # the options before the command: only --engine
        option = rest.pop(0)
        if option == "--engine" and rest:
            engine = rest.pop(0)
        elif option.startswith("--engine="):
            engine = option.split("=", 1)[1]
        else:
            return False
    if not rest or rest[0] != "vacuum" or engine != "in-process":
        return False
    return not any(
        a in ("--cluster-listing", "--inventory") or a.startswith("--inventory=") for a in rest
    )


def lite_only(argv: Sequence[str]) -> bool:
    """Whether the arguments ask for VACUUM LITE (``--mode lite``), which lists nothing."""
    args = list(argv)
    return "--mode=lite" in args or ("--mode", "lite") in itertools.pairwise(args)


def exit_without_teardown(code: int) -> None:
    """End the process now, its output flushed, without the interpreter's teardown.

    For ``python -m python_ops vacuum`` in this process once the command has finished: its
    output is written, its files closed, no thread or engine is left, and the teardown would
    only free memory the system takes back anyway. pyarrow's alone costs 30-50 ms here (a
    process that imports it and exits), about 5 % of a VACUUM LITE of a million-file table.

    Args:
        code: The exit code.
    """
    import logging
    import os

    logging.shutdown()  # flushes and closes the handlers, as the normal exit would
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    if engine_free_vacuum(sys.argv[1:]):
        block_numpy_for_process()
        system_pool_for_process()
        decode_on_threads()  # the checkpoint's columns: a host process decodes on one thread
        # LITE holds no listing: the fixed threshold only costs it page faults on the
        # checkpoint's decode (a million entries: 0.25 s more system time, 22 MB less peak)
        if not lite_only(sys.argv[1:]):
            fix_mmap_threshold_for_process()

    from python_ops.cli.main import run

    code = run()
    if engine_free_vacuum(sys.argv[1:]):
        exit_without_teardown(code)
    sys.exit(code)
