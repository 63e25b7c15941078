{#-
  Delete one model's expired Delta log files and print what went (a dry run unless dry_run=false).
      dbt run-operation cleanup_logs_table --args '{model: fct_orders, retention_days: 30}'
-#}
{% macro cleanup_logs_table(model, retention_days=none, dry_run=true) %}
  {{ refuse_unknown_arguments('cleanup_logs_table', kwargs, ['model', 'retention_days', 'dry_run']) }}
  {{ return(adapter.dispatch('cleanup_logs_table')(model, retention_days, dry_run)) }}
{% endmacro %}

{% macro default__cleanup_logs_table(model, retention_days, dry_run) %}
  {{ exceptions.raise_compiler_error("cleanup_logs_table: the '" ~ adapter.type() ~ "' adapter has no Delta maintenance; use type: sparkdelta") }}
{% endmacro %}

{% macro sparkdelta__cleanup_logs_table(model, retention_days, dry_run) %}
  {%- if model is none -%}
    {{ exceptions.raise_compiler_error("cleanup_logs_table: pass the model name, e.g. --args '{model: fct_orders}'") }}
  {%- endif -%}
  {#- a string such as 'false' would be truthy: refuse it rather than guess which run was meant -#}
  {%- if dry_run is not boolean -%}
    {{ exceptions.raise_compiler_error("cleanup_logs_table: dry_run must be true or false (a YAML boolean, unquoted), got " ~ (("the string '" ~ dry_run ~ "'") if dry_run is string else dry_run)) }}
  {%- endif -%}
  {%- if execute -%}
    {%- set built = built_relation(model, 'cleanup_logs_table') -%}
    {#- the model's own retention unless the call names one, as the post-hook, cleanup_logs_all
        and vacuum_table do -#}
    {%- set model_retention = built.node.config.get('maintenance_log_retention_days') -%}
    {%- set retention = retention_days if retention_days is not none else model_retention -%}
    {%- set result = adapter.cleanup_logs(built.relation, retention_days=retention, dry_run=dry_run) -%}
    {%- set source = 'given' if retention_days is not none
          else ("the model's maintenance_log_retention_days" if model_retention is not none
          else "the table's") -%}
    {{ print("%s %s: %s; oldest version kept %s (retention %g days, %s)%s" | format(
          'would delete from' if result.dry_run else 'deleted from', result.relation,
          adapter.files_text(result.files_found if result.dry_run else result.files_deleted,
                             result.bytes_found if result.dry_run else result.bytes_deleted, 'log file'),
          result.oldest_version_kept, result.retention_days, source,
          '; skipped: ' ~ result.skipped_reason if result.skipped_reason else '')) }}
    {{ return(result) }}
  {%- endif -%}
{% endmacro %}
