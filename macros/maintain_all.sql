{#-
  Run whatever maintenance is due (config, table health, history) for every selected model,
  print a per-model table, fail when an op failed on a model with on_error: fail.
      dbt run-operation maintain_all --args '{threads: 2, time_budget_s: 600}'
  ops narrows the ops considered (e.g. [vacuum, optimize]); none means all three.
  Dispatched: see maintain_model.
-#}
{% macro maintain_all(select=none, exclude=none, dry_run=false, retention_hours=none, threads=1, time_budget_s=none, ops=none, selector=none, state=none) %}
  {{ refuse_unknown_arguments('maintain_all', kwargs, ['select', 'exclude', 'dry_run', 'retention_hours', 'threads', 'time_budget_s', 'ops', 'selector', 'state']) }}
  {#- selector/state are passed only when given, so an override with the older signature still works -#}
  {%- if selector is not none or state is not none -%}
    {{ return(adapter.dispatch('maintain_all')(select, exclude, dry_run, retention_hours, threads, time_budget_s, ops, selector, state)) }}
  {%- endif -%}
  {{ return(adapter.dispatch('maintain_all')(select, exclude, dry_run, retention_hours, threads, time_budget_s, ops)) }}
{% endmacro %}

{% macro default__maintain_all(select, exclude, dry_run, retention_hours, threads, time_budget_s, ops, selector=none, state=none) %}
  {{ exceptions.raise_compiler_error("maintain_all: the '" ~ adapter.type() ~ "' adapter has no Delta maintenance; use type: sparkdelta") }}
{% endmacro %}

{% macro sparkdelta__maintain_all(select, exclude, dry_run, retention_hours, threads, time_budget_s, ops, selector=none, state=none) %}
  {{ return(run_maintenance('maintain_all', ops, true, select, exclude, dry_run, retention_hours, threads, time_budget_s, selector, state)) }}
{% endmacro %}
