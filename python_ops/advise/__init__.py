"""The maintenance advisor: clustering columns chosen from what the project's SQL filters on.

``project.advise_project`` reads the manifest and every reader's compiled SQL (never dbt
itself); ``project.recommended_columns`` is the per-model answer other ops use. Nothing is
imported here: the parser (sqlglot) loads only where the advisor runs, not in every post-hook.
"""
