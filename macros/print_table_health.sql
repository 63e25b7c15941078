{#-
  Print the Delta table health of every table-backed model and seed as a table.
  Usage: dbt run-operation print_table_health [--args '{select: [fct_orders]}']
-#}
{% macro print_table_health(select=none, small_file_threshold_bytes=none) %}
  {%- if select is string -%}{%- set select = [select] -%}{%- endif -%}
  {%- if execute -%}
    {%- set rows = [] -%}
    {%- for node in graph.nodes.values()
          if node.resource_type in ('model', 'seed')
          and node.config.materialized in ('table', 'incremental', 'seed')
          and (select is none or node.name in select) -%}
      {%- set relation = adapter.get_relation(node.database, node.schema, node.alias) -%}
      {%- if relation is not none -%}
        {%- do rows.append(adapter.table_health(relation, small_file_threshold_bytes)) -%}
      {%- endif -%}
    {%- endfor -%}
    {{ print(shop_lakehouse.format_table_health(rows)) }}
    {{ return(rows) }}
  {%- endif -%}
{% endmacro %}
