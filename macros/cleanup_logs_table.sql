{#-
  Delete one model's expired Delta log files and print what went (a dry run unless dry_run=false).
  Usage: dbt run-operation cleanup_logs_table --args '{model: fct_orders, retention_days: 30}'
-#}
{% macro cleanup_logs_table(model, retention_days=none, dry_run=true) %}
  {%- if model is none -%}
    {{ exceptions.raise_compiler_error("cleanup_logs_table: pass the model name, e.g. --args '{model: fct_orders}'") }}
  {%- endif -%}
  {%- if execute -%}
    {%- set nodes = graph.nodes.values() | selectattr('name', 'equalto', model) | list -%}
    {%- if nodes | length == 0 -%}
      {{ exceptions.raise_compiler_error("cleanup_logs_table: no model named '" ~ model ~ "'") }}
    {%- endif -%}
    {%- set node = nodes[0] -%}
    {%- set relation = adapter.get_relation(node.database, node.schema, node.alias) -%}
    {%- if relation is none -%}
      {{ exceptions.raise_compiler_error("cleanup_logs_table: '" ~ model ~ "' has not been built yet") }}
    {%- endif -%}
    {%- set result = adapter.cleanup_logs(relation, retention_days, dry_run) -%}
    {{ print("%s %s: %d log files, %d bytes; oldest version kept %s%s" | format(
          'would delete from' if result.dry_run else 'deleted from', result.relation,
          result.files_found if result.dry_run else result.files_deleted,
          result.bytes_found if result.dry_run else result.bytes_deleted,
          result.oldest_version_kept,
          '; skipped: ' ~ result.skipped_reason if result.skipped_reason else '')) }}
    {{ return(result) }}
  {%- endif -%}
{% endmacro %}
