"""What a purge is asked to do: one frozen value, checked once."""

from __future__ import annotations

from dataclasses import dataclass

from python_ops.values import checked_number

#: Delta's own OPTIMIZE rewrites a file whose deletion vector deletes more than this share.
DEFAULT_DELETED_RATIO = 0.05


@dataclass(frozen=True)
class PurgeOptions:
    """A purge request.

    Attributes:
        deleted_ratio: Purge a partition when its deleted rows over its rows exceed this
            (0..1; Delta's ``optimize.maxDeletedRowsRatio`` by default).
        dry_run: Only report what would be purged.
    """

    deleted_ratio: float = DEFAULT_DELETED_RATIO
    dry_run: bool = False

    @classmethod
    def checked(cls, *, deleted_ratio: float, dry_run: bool) -> PurgeOptions:
        """The options, validated.

        Raises:
            ConfigError: For a ratio outside 0..1 (naming ``deleted_ratio``).
        """
        ratio = checked_number(deleted_ratio, setting="deleted_ratio", maximum=1)
        return cls(deleted_ratio=ratio, dry_run=dry_run)

    def params(self) -> dict[str, float | bool]:
        """The options as the audit records them."""
        return {"deleted_ratio": self.deleted_ratio, "dry_run": self.dry_run}
