"""A run-operation's misspelt argument, named with the nearest valid one.

dbt hands ``--args`` to the macro as keyword arguments; a macro that does not take one fails
with Jinja's bare "takes no keyword argument". The run-operation macros catch the others
(``kwargs``) and refuse them with these words instead.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import Any


def unknown_arguments_text(caller_name: str, given: Iterable[Any], valid: Sequence[str]) -> str:
    """Why a run-operation refuses arguments it does not take, and what it takes.

    Args:
        caller_name: The run-operation (``maintain_all``).
        given: The arguments it does not take, as passed.
        valid: The arguments it takes, in its signature's order.

    Returns:
        E.g. ``maintain_all: unknown argument 'selct' (did you mean 'select'?). maintain_all
        takes: select, exclude, ...``.
    """
    names = [str(v) for v in valid]
    unknown = sorted(str(key) for key in given)
    named = []
    for key in unknown:
        near = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
        named.append(f"'{key}'" + (f" (did you mean '{near[0]}'?)" if near else ""))
    noun = "argument" if len(unknown) == 1 else "arguments"
    return (
        f"{caller_name}: unknown {noun} {', '.join(named)}. "
        f"{caller_name} takes: {', '.join(names)}."
    )
