"""The maintenance advisor: clustering columns chosen from what the project's SQL filters on.

``advise_project`` reads the manifest and every reader's compiled SQL (never dbt itself);
``recommended_columns`` is the per-model answer other ops use.
"""

from python_ops.advise.advisor import ModelAdvice
from python_ops.advise.project import advise_project, recommended_columns

__all__ = ["ModelAdvice", "advise_project", "recommended_columns"]
