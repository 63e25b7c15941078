{#-
  VACUUM one model's Delta table and print what it found (a dry run unless dry_run=false).
      dbt run-operation vacuum_table --args '{model: fct_orders, retention_hours: 168}'
  Without retention_hours, the model's maintenance_vacuum_retention_hours applies (else the
  table's own); the model's maintenance_vacuum_allow_short_retention applies here too.
-#}
{% macro vacuum_table(model, retention_hours=none, dry_run=true, partition_filter=none) %}
  {{ refuse_unknown_arguments('vacuum_table', kwargs, ['model', 'retention_hours', 'dry_run', 'partition_filter']) }}
  {{ return(adapter.dispatch('vacuum_table')(model, retention_hours, dry_run, partition_filter)) }}
{% endmacro %}

{% macro default__vacuum_table(model, retention_hours, dry_run, partition_filter) %}
  {{ exceptions.raise_compiler_error("vacuum_table: the '" ~ adapter.type() ~ "' adapter has no Delta maintenance; use type: sparkdelta") }}
{% endmacro %}

{% macro sparkdelta__vacuum_table(model, retention_hours, dry_run, partition_filter) %}
  {%- if model is none -%}
    {{ exceptions.raise_compiler_error("vacuum_table: pass the model name, e.g. --args '{model: fct_orders}'") }}
  {%- endif -%}
  {#- a string such as 'false' would be truthy: refuse it rather than guess which run was meant -#}
  {%- if dry_run is not boolean -%}
    {{ exceptions.raise_compiler_error("vacuum_table: dry_run must be true or false (a YAML boolean, unquoted), got " ~ (("the string '" ~ dry_run ~ "'") if dry_run is string else dry_run)) }}
  {%- endif -%}
  {%- if execute -%}
    {%- set built = built_relation(model, 'vacuum_table') -%}
    {#- the model's own retention unless the call names one, as the post-hook and vacuum_all -#}
    {%- set model_retention = built.node.config.get('maintenance_vacuum_retention_hours') -%}
    {%- set retention = retention_hours if retention_hours is not none else model_retention -%}
    {%- set result = adapter.vacuum(built.relation, retention_hours=retention,
          dry_run=dry_run, partition_filter=partition_filter,
          allow_short_retention=built.node.config.get('maintenance_vacuum_allow_short_retention', false)) -%}
    {%- set source = 'given' if retention_hours is not none
          else ("the model's maintenance_vacuum_retention_hours" if model_retention is not none
          else "the table's") -%}
    {{ print("%s %s: %s, %d %s (retention %s, %s; version %d)" | format(
          'would delete from' if result.dry_run else 'deleted from', result.relation,
          adapter.files_text(result.files_found if result.dry_run else result.files_deleted,
                             result.bytes_found if result.dry_run else result.bytes_deleted),
          result.dirs_found, 'directory' if result.dirs_found == 1 else 'directories',
          adapter.retention_text(result.retention_hours, result.retention_requested_hours),
          source, result.table_version)) }}
    {{ return(result) }}
  {%- endif -%}
{% endmacro %}
