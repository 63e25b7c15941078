{#-
  Delete one model's expired Delta log files and print what went (a dry run unless dry_run=false).
  Usage: dbt run-operation cleanup_logs_table --args '{model: fct_orders, retention_days: 30}'
-#}
{% macro cleanup_logs_table(model, retention_days=none, dry_run=true) %}
  {%- if execute -%}
    {%- set built = shop_lakehouse.built_relation(model, 'cleanup_logs_table') -%}
    {%- set result = adapter.cleanup_logs(built.relation, retention_days, dry_run) -%}
    {{ print("%s %s: %d log files, %d bytes; oldest version kept %s%s" | format(
          'would delete from' if result.dry_run else 'deleted from', result.relation,
          result.files_found if result.dry_run else result.files_deleted,
          result.bytes_found if result.dry_run else result.bytes_deleted,
          result.oldest_version_kept,
          '; skipped: ' ~ result.skipped_reason if result.skipped_reason else '')) }}
    {{ return(result) }}
  {%- endif -%}
{% endmacro %}
