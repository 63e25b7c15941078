"""Where a dbt project's ``type: sparkdelta`` target puts its tables, read without dbt.

``python -m python_ops maintain`` (and the path commands with ``--model``) must find the tables
where dbt put them. dbt takes them from the profile: ``profiles.yml`` found as dbt finds it
(``--profiles-dir``, else ``$DBT_PROFILES_DIR``, else the current directory when it holds a
``profiles.yml``, else ``~/.dbt``; and, unlike dbt, the project directory before ``~/.dbt``,
since a scheduler rarely runs in the project), the profile named by ``dbt_project.yml``, its
``--target`` / ``$DBT_TARGET`` / ``target:`` output. The adapter's keys
(``dbt/adapters/sparkdelta/connections.py``) are ``warehouse`` (embedded engine; default
``warehouse``, a relative path is relative to the project directory) and ``location_root``
(tables at ``<location_root>/<schema>/<alias>``).

This module parses YAML itself and never imports dbt. Of dbt's Jinja it understands only
``{{ env_var('NAME') }}`` and ``{{ env_var('NAME', 'default') }}`` in the keys it reads; anything
else there is refused naming the key and the fix (``--warehouse``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from python_ops.errors import ConfigError
from python_ops.maintenance.configuration.engine_modes import EngineMode, engine_mode

PROFILES_FILE = "profiles.yml"
PROJECT_FILE = "dbt_project.yml"
ADAPTER_TYPE = "sparkdelta"
DEFAULT_WAREHOUSE = "warehouse"
#: Every key a ``type: sparkdelta`` output may have, as dbt checks it: the adapter's credentials
#: (``SparkDeltaCredentials``, dbt-spark's and this adapter's own fields) and dbt's ``type`` and
#: ``threads`` (a unit test keeps this equal to the adapter's fields; python_ops never imports
#: dbt). dbt refuses any other key; so does the command line, rather than fall back silently.
PROFILE_KEYS = frozenset(
    {
        "type",
        "threads",
        "auth",
        "cluster",
        "connect_retries",
        "connect_timeout",
        "connect_url",
        "connection_string_suffix",
        "database",
        "driver",
        "endpoint",
        "engine_port",
        "host",
        "kerberos_service_name",
        "location_root",
        "method",
        "mode",
        "organization",
        "password",
        "poll_interval",
        "port",
        "query_retries",
        "query_timeout",
        "retry_all",
        "schema",
        "server_side_parameters",
        "token",
        "use_ssl",
        "user",
        "warehouse",
    }
)

_ENV_VAR = re.compile(
    r"""\{\{-?\s*env_var\(\s*(?P<q1>['"])(?P<name>[^'"]+)(?P=q1)\s*"""
    r"""(?:,\s*(?P<q2>['"])(?P<default>[^'"]*)(?P=q2)\s*)?\)\s*-?\}\}"""
)


def embedded_warehouse(setting: str | None, project_dir: str) -> str:
    """The embedded engine's warehouse directory, as the adapter resolves it.

    Args:
        setting: The target's ``warehouse`` (None: ``warehouse``).
        project_dir: The dbt project directory (relative paths are relative to it).

    Returns:
        An absolute path (or the URI as given).
    """
    path = os.path.expanduser(setting or DEFAULT_WAREHOUSE)
    return path if "://" in path else os.path.abspath(os.path.join(project_dir, path))


@dataclass(frozen=True)
class ProfileTarget:
    """The parts of a dbt target that say where its tables are.

    Attributes:
        profiles_path: The ``profiles.yml`` read.
        profile: The profile name (``profile:`` of ``dbt_project.yml``).
        target: The target (output) name.
        method: ``session`` (the default), ``thrift``, ``http`` or ``odbc``.
        mode: ``embedded`` (the default) or ``attach``.
        warehouse: The warehouse directory, absolute; None when the target has none (a cluster's
            metastore places the tables).
        location_root: The profile's ``location_root`` (tables at
            ``<location_root>/<schema>/<alias>``), or None.
    """

    profiles_path: str
    profile: str
    target: str
    method: str
    mode: EngineMode
    warehouse: str | None
    location_root: str | None

    def describe(self) -> str:
        """Where this came from, for messages: ``profile 'p' target 't' in <path>``."""
        return f"profile '{self.profile}' target '{self.target}' in {self.profiles_path}"


def _read_yaml(path: str, setting: str) -> dict[str, Any]:
    # imported here: a command without a dbt project (vacuum <path>) never loads PyYAML
    import yaml  # type: ignore[import-untyped]  # PyYAML comes with dbt-core; no stubs pinned

    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    except OSError as err:
        raise ConfigError(
            setting=setting, value=path, fix=f"It cannot be read ({err.strerror})."
        ) from err
    except yaml.YAMLError as err:
        raise ConfigError(
            setting=setting, value=path, fix=f"It is not valid YAML ({err})."
        ) from err
    if not isinstance(data, dict):
        raise ConfigError(setting=setting, value=path, fix="It must be a YAML mapping.")
    return data


def find_profiles_yml(project_dir: str, profiles_dir: str | None = None) -> str | None:
    """The ``profiles.yml`` dbt would read for this project, or None when there is none.

    Args:
        project_dir: The dbt project directory.
        profiles_dir: ``--profiles-dir``, if given (then it must hold a ``profiles.yml``).

    Returns:
        The path, or None when no candidate directory holds one.

    Raises:
        ConfigError: When ``profiles_dir`` (or ``$DBT_PROFILES_DIR``) holds no profiles.yml.
    """
    for setting, given in (("profiles_dir", profiles_dir), ("DBT_PROFILES_DIR", None)):
        directory = given if setting == "profiles_dir" else os.environ.get(setting)
        if directory:
            path = os.path.join(os.path.abspath(os.path.expanduser(directory)), PROFILES_FILE)
            if not os.path.isfile(path):
                raise ConfigError(
                    setting=setting,
                    value=directory,
                    fix=f"{path} does not exist. Point it at the directory of your profiles.yml.",
                )
            return path
    for directory in (os.getcwd(), project_dir, os.path.expanduser("~/.dbt")):
        path = os.path.join(os.path.abspath(directory), PROFILES_FILE)
        if os.path.isfile(path):
            return path
    return None


def project_profile_name(project_dir: str) -> str:
    """The ``profile:`` of the project's ``dbt_project.yml``.

    Raises:
        ConfigError: When the file is missing, unreadable or names no profile.
    """
    path = os.path.join(project_dir, PROJECT_FILE)
    if not os.path.isfile(path):
        raise ConfigError(
            setting="project_dir",
            value=project_dir,
            fix=f"{path} does not exist. Point --project-dir at a dbt project.",
        )
    name = _read_yaml(path, "project_dir").get("profile")
    if not isinstance(name, str) or not name or "{" in name:
        raise ConfigError(
            setting="profile",
            value=name,
            fix=f"{path} must name its profile ('profile: <name>', no Jinja); or pass --profile.",
        )
    return name


def render_env_vars(text: str, *, key: str, path: str) -> str:
    """Replace ``{{ env_var('NAME'[, 'default']) }}`` as dbt does; refuse any other Jinja.

    Args:
        text: A profile value.
        key: The profile key, for messages.
        path: The profiles.yml, for messages.

    Returns:
        The rendered value.

    Raises:
        ConfigError: For an unset variable without a default, or other Jinja.
    """

    def one(match: re.Match[str]) -> str:
        name, default = match.group("name"), match.group("default")
        value = os.environ.get(name, default)
        if value is None:
            raise ConfigError(
                setting=key,
                value=text,
                fix=f"Environment variable {name} is not set and has no default ({path}). "
                f"Set it, or pass --{key.replace('_', '-')}.",
            )
        return value

    rendered = _ENV_VAR.sub(one, text)
    if "{{" in rendered or "{%" in rendered:
        raise ConfigError(
            setting=key,
            value=text,
            fix=f"Only {{{{ env_var('NAME', 'default') }}}} is understood outside dbt ({path}). "
            f"Pass --{key.replace('_', '-')} instead.",
        )
    return rendered


def _value(output: dict[str, Any], key: str, path: str) -> str | None:
    raw = output.get(key)
    if raw is None:
        return None
    return render_env_vars(str(raw), key=key, path=path).strip() or None


def _refuse_unknown_keys(output: dict[str, Any], profile: str, target: str, path: str) -> None:
    """Refuse a key dbt refuses (a misspelt ``warehous:``), naming the closest valid one.

    Raises:
        ConfigError: Naming the key, the profile and target, and the fix.
    """
    import difflib

    for key in sorted(str(k) for k in output):
        if key in PROFILE_KEYS:
            continue
        close = difflib.get_close_matches(key, sorted(PROFILE_KEYS), n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise ConfigError(
            setting="profile key",
            value=key,
            fix=f"Target '{target}' of profile '{profile}' in {path} has a key dbt does not "
            f"know ({hint}dbt refuses it too). Fix the key, or remove it.",
        )


def read_profile_target(
    project_dir: str,
    *,
    profiles_dir: str | None = None,
    profile: str | None = None,
    target: str | None = None,
) -> ProfileTarget | None:
    """The project's target as dbt would pick it; None when no profiles.yml is found.

    Args:
        project_dir: The dbt project directory (absolute).
        profiles_dir: ``--profiles-dir``.
        profile: ``--profile`` (default: the project's ``profile:``).
        target: ``--target`` (default: ``$DBT_TARGET``, else the profile's ``target:``).

    Returns:
        The target, or None when there is no profiles.yml anywhere dbt looks.

    Raises:
        ConfigError: When the profile or target does not exist, is not ``type: sparkdelta``,
            or a key this reads uses Jinja other than ``env_var``.
    """
    path = find_profiles_yml(project_dir, profiles_dir)
    if path is None:
        return None
    name = profile or project_profile_name(project_dir)
    profiles = _read_yaml(path, "profiles_dir")
    entry = profiles.get(name)
    if not isinstance(entry, dict):
        known = ", ".join(sorted(k for k in profiles if k != "config")) or "none"
        raise ConfigError(
            setting="profile",
            value=name,
            fix=f"{path} has no profile '{name}' (it has: {known}). Pass --profiles-dir or "
            "--profile.",
        )
    chosen = target or os.environ.get("DBT_TARGET") or entry.get("target") or "default"
    chosen = render_env_vars(str(chosen), key="target", path=path)
    outputs = entry.get("outputs") or {}
    output = outputs.get(chosen) if isinstance(outputs, dict) else None
    if not isinstance(output, dict):
        raise ConfigError(
            setting="target",
            value=chosen,
            fix=f"Profile '{name}' in {path} has no output '{chosen}' (it has: "
            f"{', '.join(outputs) or 'none'}). Pass --target.",
        )
    kind = _value(output, "type", path)
    if kind != ADAPTER_TYPE:
        raise ConfigError(
            setting="type",
            value=kind,
            fix=f"Target '{chosen}' of profile '{name}' in {path} is not 'type: {ADAPTER_TYPE}'; "
            "these tables are not this adapter's. Pass --target, or --warehouse.",
        )
    _refuse_unknown_keys(output, name, chosen, path)
    method = _value(output, "method", path) or "session"
    mode = engine_mode(_value(output, "mode", path))
    warehouse = _value(output, "warehouse", path)
    if method == "session" and mode.owns_warehouse:  # both default to ./warehouse
        warehouse = embedded_warehouse(warehouse, project_dir)
    elif warehouse is not None and "://" not in warehouse:
        warehouse = os.path.abspath(os.path.join(project_dir, os.path.expanduser(warehouse)))
    return ProfileTarget(
        profiles_path=path,
        profile=name,
        target=chosen,
        method=method,
        mode=mode,
        warehouse=warehouse,
        location_root=_value(output, "location_root", path),
    )
