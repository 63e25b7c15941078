"""Profile settings are checked when dbt loads the profile, with messages that name the setting.

Each test edits the embedded target of the example project's copy (``profiles_example``) and
runs real dbt on it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from dbt.cli.main import dbtRunner
from dbt_common.events.base_types import EventMsg

from tests.helpers.dbt_runs import Dbt

pytestmark = pytest.mark.slow

EMBEDDED_PORT_LINE = "      engine_port: 0          # 0 = any free port on 127.0.0.1\n"


def edit_embedded_target(project: Path, replacement: str) -> None:
    """Replace the embedded target's ``engine_port`` line by ``replacement`` (YAML lines)."""
    profiles = project / "profiles_example" / "profiles.yml"
    text = profiles.read_text()
    assert EMBEDDED_PORT_LINE in text
    profiles.write_text(text.replace(EMBEDDED_PORT_LINE, replacement, 1))


def test_misspelt_key_is_refused_naming_the_nearest_setting(project: Path, dbt: Dbt) -> None:
    edit_embedded_target(project, "      engine_port: 0\n      warehous: elsewhere\n")

    result = dbt(project, "run", "--select", "landing_customers")

    assert not result.success
    message = str(result.exception)
    assert "profile setting 'warehous' is not a setting of the sparkdelta adapter" in message
    assert "Did you mean 'warehouse'? Rename it." in message
    # nothing was built anywhere: no second warehouse with its own catalog journal
    assert not (project / "warehouse").exists()
    assert not (project.parent / "warehouse").exists()  # the target's own warehouse
    assert not (project / "elsewhere").exists()


def test_dbt_debug_fails_on_a_misspelt_key(project: Path) -> None:
    edit_embedded_target(project, "      engine_port: 0\n      conect_url: sc://127.0.0.1:1\n")
    lines: list[str] = []

    def collect(event: EventMsg) -> None:
        lines.append(event.info.msg)

    result = dbtRunner(callbacks=[collect]).invoke(
        [
            "debug",
            "--project-dir",
            str(project),
            "--profiles-dir",
            str(project / "profiles_example"),
        ]
    )

    assert not result.success
    output = "\n".join(lines)
    assert "profile setting 'conect_url' is not a setting" in output
    assert "Did you mean 'connect_url'?" in output


def test_engine_port_out_of_range_names_the_setting(project: Path, dbt: Dbt) -> None:
    edit_embedded_target(project, "      engine_port: 99999\n")

    result = dbt(project, "run", "--select", "landing_customers")

    assert not result.success
    message = str(result.exception)
    assert "profile setting 'engine_port' has bad value 99999" in message
    assert "Use a TCP port from 1 to 65535, or 0 to pick a free one." in message
    assert "out of range integral type conversion" not in message


def test_connect_url_without_attach_is_a_warning(project: Path) -> None:
    edit_embedded_target(project, "      engine_port: 0\n      connect_url: sc://127.0.0.1:1\n")
    warnings: list[str] = []

    def collect(event: EventMsg) -> None:
        if event.info.level == "warn":
            warnings.append(event.info.msg)

    result = dbtRunner(callbacks=[collect]).invoke(
        [
            "parse",
            "--project-dir",
            str(project),
            "--profiles-dir",
            str(project / "profiles_example"),
        ]
    )

    assert result.success, result.exception
    assert any(
        "profile setting 'connect_url' (sc://127.0.0.1:1) is ignored with 'mode: embedded'" in w
        and "Set 'mode: attach'" in w
        for w in warnings
    ), warnings
