{#-
  VACUUM one model's Delta table and print what it found (a dry run unless dry_run=false).
  Usage: dbt run-operation vacuum_table --args '{model: fct_orders, retention_hours: 168}'
-#}
{% macro vacuum_table(model, retention_hours=none, dry_run=true, partition_filter=none) %}
  {%- if execute -%}
    {%- set built = shop_lakehouse.built_relation(model, 'vacuum_table') -%}
    {%- set result = adapter.vacuum(built.relation, retention_hours, dry_run, partition_filter,
          built.node.config.get('maintenance_vacuum_allow_short_retention', false)) -%}
    {{ print("%s %s: %d files, %d bytes, %d directories (retention %s h, version %d)" | format(
          'would delete from' if result.dry_run else 'deleted from', result.relation,
          result.files_found if result.dry_run else result.files_deleted,
          result.bytes_found if result.dry_run else result.bytes_deleted,
          result.dirs_found, result.retention_hours, result.table_version)) }}
    {{ return(result) }}
  {%- endif -%}
{% endmacro %}
