"""The op parameter each model setting is passed as, and op errors attributed to the model.

An op names its own parameter (``zorder_by``) and knows tables, not dbt models; a dbt user
wrote ``maintenance_zorder_by`` on a model. The pairs come from the settings' declarations
(``config.SETTINGS``: ``op`` and ``param``), once. Every call the maintenance layer makes into
an op for a model runs inside ``as_model_setting``, which re-raises the op's ``ConfigError``
(its subclass kept) naming the model and the key, and words a refused retention's override as
the model's key. ``model_audit`` and ``model_words`` are the same naming for the op's audit
record and its warnings.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from python_ops.errors import ConfigError, RetentionTooShortError
from python_ops.maintenance.configuration.config import SETTINGS
from python_ops.ops.audit import Audit
from python_ops.ops.vacuum.rule.retention import OVERRIDE, OverrideWords


def op_keys(op: str) -> dict[str, str]:
    """The op's parameters set from model settings, each to its ``maintenance_*`` key.

    Args:
        op: The op's registry name.

    Returns:
        Parameter name to config key (e.g. ``retention_hours`` to
        ``maintenance_vacuum_retention_hours``).
    """
    return {s.param: s.key for s in SETTINGS if s.op == op and s.param}


# The model setting that allows a retention below the table's minimum (VACUUM's override).
OVERRIDE_KEY = op_keys("vacuum")[OVERRIDE]


class _AsModelSetting:
    """``as_model_setting``'s block: a class, not a generator (every post-hook enters two)."""

    __slots__ = ("model", "op")

    def __init__(self, model: str | None, op: str | None) -> None:
        self.model, self.op = model, op

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, err: BaseException | None, trace: object) -> None:
        if not isinstance(err, ConfigError) or self.model is None:
            return  # nothing raised, or not a setting's error: it passes unchanged
        keys = op_keys(self.op) if self.op else {}
        if isinstance(err, RetentionTooShortError):
            raise err.attributed(
                model=self.model, keys=keys, how_to_override=model_override_fix()
            ) from err
        raise err.attributed(model=self.model, keys=keys) from err


def as_model_setting(model: str | None, op: str | None = None) -> AbstractContextManager[None]:
    """Re-raise an op's ``ConfigError`` as the model's: named, its key, the fix in its words.

    The error keeps its class (``RetentionTooShortError``, ``ConfigErrors``) and its message
    shape: ``model 'fct': setting 'maintenance_zorder_by' has bad value ...``.

    Args:
        model: The model the op runs for (None: errors pass unchanged).
        op: The op whose settings were passed, to name them as the model's keys; None keeps
            the op's own names (a run-operation's own ``retention_hours`` argument, an
            option given on the command line).

    Returns:
        The block to run the op's call in.
    """
    return _AsModelSetting(model, op)


def model_override_fix() -> str:
    """How a model allows a VACUUM retention below its table's minimum, as a refusal says."""
    return f"set '{OVERRIDE_KEY}: true' on the model to override."


def model_audit(model: str, *, enabled: bool = True) -> Audit:
    """The audit an op runs with for a model: its record names the model."""
    return Audit(enabled=enabled, labels={"model": model})


def model_words(model: str) -> OverrideWords:
    """How an allowed short retention's warning names a model and its override key."""
    return OverrideWords(table=model, override=OVERRIDE_KEY)
