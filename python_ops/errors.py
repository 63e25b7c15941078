"""One exception hierarchy for everything the maintenance ops refuse or fail at.

Every message names what was wrong and how to fix it, so the first thing a user reads (in a dbt
log, a scheduler's output or a traceback) is actionable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


class MaintenanceError(Exception):
    """Base class of every error raised by ``python_ops`` and the adapter plugin."""


class TableNotFoundError(MaintenanceError):
    """The path does not hold a Delta table (no ``_delta_log`` with a commit)."""


class DeltaLogError(MaintenanceError):
    """The Delta log exists but cannot be read consistently (gap, corrupt file, bad action)."""


class UnsupportedFeatureError(MaintenanceError):
    """The table's protocol names a feature (or version) an op does not support; it refused.

    Args:
        table: The table location.
        feature: The feature name (or ``protocol r/w`` for a version problem).
        op: The op that refused, or None when no op can run.
        reason: Why, and what to do instead.
    """

    def __init__(self, *, table: str, feature: str, op: str | None, reason: str):
        self.table = table
        self.feature = feature
        self.op = op
        self.reason = reason
        who = f"{op} refused" if op else "refused"
        super().__init__(
            f"table {table}: {who}: table feature '{feature}': {reason}. Nothing was listed, "
            "written or deleted. Run this op with Delta itself (Spark with delta-spark) or "
            "leave this table out of maintenance (maintenance_enabled: false)."
        )


class StorageError(MaintenanceError):
    """A storage call (list, read, delete) failed for a reason other than a missing file."""


class LiveFilesMissingError(StorageError):
    """Data files the table's log references are not in storage: a rewrite refused.

    Raised before the rewrite wrote anything (exit 2: nothing changed).

    Args:
        location: The table.
        op: The op that refused (``OPTIMIZE``).
        missing: The missing files, relative to the table root.
    """

    def __init__(self, location: str, op: str, missing: list[str]):
        self.missing = tuple(missing)
        shown = ", ".join(f"'{m}'" for m in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        super().__init__(
            f"{op} of {location} refused: {len(missing)} live data file(s) the table's log "
            f"references are missing from storage: {shown}{more}. Restore them before "
            "rewriting the table. Nothing was written or committed."
        )


class ConfigError(MaintenanceError):
    """A setting has a bad value.

    An op names its own parameter and no model (it knows tables, not dbt); the layer that
    passed the setting re-raises the error with ``attributed`` under the key the user wrote
    and the model it belongs to (``python_ops.maintenance.configuration.op_keys``).

    Args:
        setting: Name of the setting as the user wrote it.
        value: The rejected value.
        fix: What to do instead (valid choices, range, or an example).
        model: The dbt model the setting belongs to, when the caller knows one.
    """

    def __init__(self, *, setting: str, value: object, fix: str, model: str | None = None):
        self.setting = setting
        self.value = value
        self.fix = fix
        self.model = model
        where = f"model '{model}': " if model else ""
        super().__init__(f"{where}setting '{setting}' has bad value {value!r}. {fix}")

    def attributed(
        self, *, model: str | None, keys: Mapping[str, str] | None = None
    ) -> ConfigError:
        """The same error (same class) naming ``model`` and the setting as the user wrote it.

        Args:
            model: The model the setting belongs to (an error already naming one keeps it).
            keys: Parameter name to the user's key (``retention_hours`` to
                ``maintenance_vacuum_retention_hours``); a setting not in it keeps its name.

        Returns:
            A new error of this class.
        """
        return type(self)(
            setting=(keys or {}).get(self.setting, self.setting),
            value=self.value,
            fix=self.fix,
            model=self.model or model,
        )


class SelectionError(ConfigError):
    """dbt refused a ``--select``/``--exclude``: its own words, said once.

    dbt's message already names the criterion, suggests the closest model and says what to
    do; wrapping it as a bad setting ("setting 'select' has bad value '<dbt's message>'. Use a
    selection dbt ls accepts.") said it twice.

    Args:
        message: dbt's message.
    """

    def __init__(self, message: str):
        super().__init__(setting="select", value=message, fix="")
        self.args = (message,)


class ConfigErrors(ConfigError):
    """Several settings of one model have bad values: every one is listed, so one fix run does.

    The attributes of the first error (``setting``, ``value``, ``fix``, ``model``) are kept, so
    a caller that handles a ``ConfigError`` sees the same fields.

    Args:
        errors: The errors, each naming its model, setting, bad value and fix (two or more).
    """

    def __init__(self, errors: Sequence[ConfigError]):
        if not errors:
            raise ValueError("ConfigErrors needs at least one error")
        self.errors = tuple(errors)
        first = self.errors[0]
        self.setting = first.setting
        self.value = first.value
        self.fix = first.fix
        self.model = first.model
        where = f"model '{first.model}' has" if first.model else "there are"
        items = "\n".join(f"  - {err}" for err in self.errors)
        Exception.__init__(
            self, f"{where} {len(self.errors)} bad maintenance settings; fix all of them:\n{items}"
        )

    def attributed(
        self, *, model: str | None, keys: Mapping[str, str] | None = None
    ) -> ConfigError:
        """Every error attributed (``ConfigError.attributed``), listed again."""
        return ConfigErrors([e.attributed(model=model, keys=keys) for e in self.errors])


class RetentionTooShortError(ConfigError):
    """A requested VACUUM retention is below the table's minimum and not overridden.

    The op that refuses knows the override only as its own parameter (``override``); how a
    user sets it depends on the caller (a model's key, the command line's flag), so the caller
    words it (``how_to_override``, given to ``attributed``).

    Args:
        setting: The retention's name as the user wrote it.
        value: The requested retention.
        fix: What to do, up to the override (``... Request at least 168 hours, or``); with no
            ``override`` the whole fix.
        override: The op's parameter that allows the retention (``allow_short_retention``);
            None: no override to name.
        how_to_override: How the caller sets it (``pass --allow-short-retention to
            override.``); None: the parameter, as a Python caller passes it.
        model: The dbt model, when the caller knows one.
    """

    def __init__(
        self,
        *,
        setting: str,
        value: object,
        fix: str,
        override: str | None = None,
        how_to_override: str | None = None,
        model: str | None = None,
    ):
        self.refusal = fix
        self.override = override
        self.how_to_override = how_to_override
        words = how_to_override or f"pass {override}=True to override."
        full = f"{fix} {words}" if override else fix
        super().__init__(setting=setting, value=value, fix=full, model=model)

    def attributed(
        self,
        *,
        model: str | None,
        keys: Mapping[str, str] | None = None,
        how_to_override: str | None = None,
    ) -> RetentionTooShortError:
        """The same refusal naming ``model``, the user's keys and how this caller overrides it."""
        return type(self)(
            setting=(keys or {}).get(self.setting, self.setting),
            value=self.value,
            fix=self.refusal,
            override=self.override,
            how_to_override=self.how_to_override or how_to_override,
            model=self.model or model,
        )


class WriterError(MaintenanceError):
    """The Delta writer refused or failed (unsupported table feature, conflict, I/O)."""


class ZOrderUnsupportedError(MaintenanceError):
    """The table uses a feature our Z-order rewrite does not read or write faithfully."""


class EngineError(MaintenanceError):
    """The Spark engine could not be started, reached or used as configured."""


class JvmDeferredError(MaintenanceError):
    """The op needs Delta's own writer (a JVM) where none may start: deferred, nothing changed.

    A post-hook never starts a JVM unless the model asks (``maintenance_post_hook_jvm``): the
    op stays due and runs in the next ``maintain_all`` (or the CLI), which may start one.
    """


class OptimizeConflictError(MaintenanceError):
    """A concurrent commit removed files being compacted; that partition was not committed.

    Args:
        message: What happened and what is left behind.
        result: What OPTIMIZE committed before the conflict (an ``OptimizeResult``), with the
            failed partitions and the untracked files the failed attempt wrote.
    """

    def __init__(self, message: str, *, result: object = None):
        self.result = result
        super().__init__(message)


class ChangedThenFailedError(MaintenanceError):
    """An op failed after it had changed the table (a commit, a delete): exit 1, never 2.

    Exit 2 says "refused, nothing changed"; once an op has committed or deleted, whatever goes
    wrong afterwards is reported with what was done, as a failure (exit 1).

    Args:
        message: What was done, then what failed.
        result: The op's result for what it did, where there is one.
    """

    def __init__(self, message: str, *, result: object = None):
        self.result = result
        super().__init__(message)


class StatsUnsupportedError(MaintenanceError):
    """The statistics op cannot compute or commit a table's statistics exactly; nothing written."""
