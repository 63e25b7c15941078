"""The maintenance macros live in the repository's top-level ``macros/``, one copy.

The adapter ships that same folder to every ``type: sparkdelta`` project: its include
directory links to it and names the link as a macro path of its own (dbt does not descend into
linked directories). Every public macro there is dispatched, with a default that says which
adapter is needed.
"""

from __future__ import annotations

import re

from tests.helpers.paths import ROOT

MACROS = ROOT / "macros"
INCLUDE = ROOT / "dbt" / "include" / "sparkdelta"
# helpers the public macros call, not meant to be run on their own
INTERNAL = {
    "built_relation",
    "maintenance_history",
    "maintenance_nodes",
    "refuse_unknown_arguments",
    "run_maintenance",
}


def test_the_adapter_ships_the_top_level_macros_folder_itself() -> None:
    assert (MACROS / "vacuum_all.sql").is_file()
    link = INCLUDE / "maintenance_macros"
    assert link.is_symlink()
    assert link.resolve() == MACROS.resolve()
    assert '"maintenance_macros"' in (INCLUDE / "dbt_project.yml").read_text()
    # no second copy anywhere in the include directory
    assert not list((INCLUDE / "macros").rglob("vacuum_all.sql"))


def test_every_public_maintenance_macro_is_dispatched() -> None:
    for path in sorted(MACROS.glob("*.sql")):
        name = path.stem
        text = path.read_text()
        assert re.search(rf"{{% macro {name}\(", text), path
        if name in INTERNAL:
            continue
        assert f"adapter.dispatch('{name}')" in text, name
        assert f"macro default__{name}(" in text, name
        assert f"macro sparkdelta__{name}(" in text, name
