{#-
  Shared by sparkdelta__vacuum_all, __optimize_all, __cleanup_logs_all and __maintain_all:
  check dry_run, run the ops on every selected model (only those due when only_due),
  print the per-model table, and fail the run-operation when any op failed. The selection is dbt's (maintenance_nodes); select/exclude syntax, ops, threads, time_budget_s, retention_hours and config are checked by the adapter (once, python_ops.maintenance.RunOptions), which
  names the bad value.
-#}
{% macro run_maintenance(caller_name, ops, only_due, select, exclude, dry_run, retention_hours, threads, time_budget_s, selector=none, state=none) %}
  {#- a string such as 'false' would be truthy: refuse it rather than guess which run was meant -#}
  {%- if dry_run is not boolean -%}
    {{ exceptions.raise_compiler_error(caller_name ~ ": dry_run must be true or false (a YAML boolean, unquoted), got " ~ (("the string '" ~ dry_run ~ "'") if dry_run is string else dry_run)) }}
  {%- endif -%}
  {%- if execute -%}
    {%- set nodes = maintenance_nodes(select, exclude, selector, state, caller_name) -%}
    {%- set request = {'ops': ops, 'only_due': only_due, 'dry_run': dry_run, 'retention_hours': retention_hours,
          'threads': threads, 'time_budget_s': time_budget_s} -%}
    {%- set run = adapter.maintain_models(nodes, request, invocation_id, maintenance_history()) -%}
    {{ print(run.table) }}
    {#- on_error: warn keeps a model's build green when its post-hook maintenance fails; a
        run-operation exists to maintain, so any failed op fails it (exit 1), after every other
        op has run: a scheduler sees the failure -#}
    {%- if run.ops_failed > 0 -%}
      {{ adapter.fail_run_operation(caller_name ~ ": " ~ run.ops_failed ~ " op(s) failed (see the table above; the other ops ran)") }}
    {%- endif -%}
    {#- a model with a bad maintenance config is that model's problem: every one is named with
        its fix, the others were maintained, and the run-operation fails (exit 1) -#}
    {%- if run.config_refused -%}
      {{ adapter.fail_run_operation(caller_name ~ ": " ~ (run.config_refused | length) ~ " model(s) refused for their maintenance config (the others were maintained):\n  - " ~ (run.config_refused.values() | join("\n  - "))) }}
    {%- endif -%}
    {{ return(run) }}
  {%- endif -%}
{% endmacro %}
