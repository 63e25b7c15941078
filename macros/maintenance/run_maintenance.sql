{#- Calls between this package's macros are qualified (shop_lakehouse.x) so they resolve when
    another project installs it as a package (tests/test_dbt_package.py). -#}
{#- Shared by vacuum_all, optimize_all, cleanup_logs_all and maintain_all: check the
    arguments, run the ops on every selected model, print the per-model table, and fail the
    run-operation when an op failed for a model whose on_error is 'fail'. -#}
{% macro run_maintenance(caller_name, ops, only_due, select, exclude, dry_run, retention_hours, threads, time_budget_s) %}
  {%- if threads is not none and (threads | int) < 1 -%}
    {{ exceptions.raise_compiler_error(caller_name ~ ": threads must be 1 or more, got " ~ threads) }}
  {%- endif -%}
  {%- if time_budget_s is not none and (time_budget_s | float) <= 0 -%}
    {{ exceptions.raise_compiler_error(caller_name ~ ": time_budget_s must be above 0, got " ~ time_budget_s) }}
  {%- endif -%}
  {%- if execute -%}
    {%- set run = adapter.maintain_models(shop_lakehouse.maintenance_nodes(), ops, only_due, select, exclude,
          dry_run, retention_hours, threads or 1, time_budget_s, invocation_id,
          shop_lakehouse.maintenance_history()) -%}
    {{ print(run.table) }}
    {%- if run.failed > 0 -%}
      {{ exceptions.raise_compiler_error(caller_name ~ ": " ~ run.failed ~ " op(s) failed on models with on_error: fail (see the table above)") }}
    {%- endif -%}
    {{ return(run) }}
  {%- endif -%}
{% endmacro %}
