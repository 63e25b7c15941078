{#-
  Run expired-log cleanup on every selected model, due or not (within each model's config and safety
  checks), print a per-model table, fail when an op failed on a model with on_error: fail.
      dbt run-operation cleanup_logs_all --args '{select: [marts], exclude: [tag:landing], dry_run: true}'
  select/exclude/selector/state are dbt's selection (see maintenance_nodes).
  Dispatched: see maintain_model.
-#}
{% macro cleanup_logs_all(select=none, exclude=none, dry_run=false, retention_hours=none, threads=1, time_budget_s=none, selector=none, state=none) %}
  {{ refuse_unknown_arguments('cleanup_logs_all', kwargs, ['select', 'exclude', 'dry_run', 'retention_hours', 'threads', 'time_budget_s', 'selector', 'state']) }}
  {#- selector/state are passed only when given, so an override with the older signature still works -#}
  {%- if selector is not none or state is not none -%}
    {{ return(adapter.dispatch('cleanup_logs_all')(select, exclude, dry_run, retention_hours, threads, time_budget_s, selector, state)) }}
  {%- endif -%}
  {{ return(adapter.dispatch('cleanup_logs_all')(select, exclude, dry_run, retention_hours, threads, time_budget_s)) }}
{% endmacro %}

{% macro default__cleanup_logs_all(select, exclude, dry_run, retention_hours, threads, time_budget_s, selector=none, state=none) %}
  {{ exceptions.raise_compiler_error("cleanup_logs_all: the '" ~ adapter.type() ~ "' adapter has no Delta maintenance; use type: sparkdelta") }}
{% endmacro %}

{% macro sparkdelta__cleanup_logs_all(select, exclude, dry_run, retention_hours, threads, time_budget_s, selector=none, state=none) %}
  {{ return(run_maintenance('cleanup_logs_all', ['cleanup_logs'], false, select, exclude, dry_run, retention_hours, threads, time_budget_s, selector, state)) }}
{% endmacro %}
