{#-
  Print the Delta table health (adapter.table_health: read from the Delta log only) of every
  table-backed model and seed as a fixed-width table.
      dbt run-operation print_table_health [--args '{select: [fct_orders]}']
-#}
{% macro print_table_health(select=none, small_file_threshold_bytes=none) %}
  {{ return(adapter.dispatch('print_table_health')(select, small_file_threshold_bytes)) }}
{% endmacro %}

{% macro default__print_table_health(select, small_file_threshold_bytes) %}
  {{ exceptions.raise_compiler_error("print_table_health: the '" ~ adapter.type() ~ "' adapter has no Delta maintenance; use type: sparkdelta") }}
{% endmacro %}

{% macro sparkdelta__print_table_health(select, small_file_threshold_bytes) %}
  {%- if select is string -%}{%- set select = [select] -%}{%- endif -%}
  {%- if execute -%}
    {%- set rows = [] -%}
    {%- for node in graph.nodes.values()
          if node.resource_type in ('model', 'snapshot', 'seed')
          and node.config.materialized in ('table', 'incremental', 'seed')
          and (select is none or node.name in select) -%}
      {%- set relation = adapter.get_relation(node.database, node.schema, node.alias) -%}
      {#- not built yet: nothing to report, not an error -#}
      {%- if relation is not none -%}
        {%- do rows.append(adapter.table_health(relation, small_file_threshold_bytes)) -%}
      {%- endif -%}
    {%- endfor -%}
    {{ print(format_table_health(rows)) }}
    {{ return(rows) }}
  {%- endif -%}
{% endmacro %}

{#- print_table_health's helper: table_health results as a fixed-width text table. -#}
{% macro format_table_health(rows) %}
  {#- sizes in scaled units (B, KB, MB, GB): a small table's size is not "0.0 MB" -#}
  {%- set header = "%-32s %8s %7s %7s %9s %9s %6s %5s %7s %s" | format(
        'table', 'version', 'ckpt', 'files', 'small', 'size', 'tombs', 'log', 'parts', 'partitioned by') -%}
  {%- set lines = [header, '-' * (header | length + 8)] -%}
  {%- for h in rows | sort(attribute='relation') -%}
    {%- do lines.append("%-32s %8d %7s %7d %9s %9s %6d %5d %7d %s" | format(
          h.relation, h.version, h.checkpoint_version if h.checkpoint_version is not none else '-',
          h.num_files, "%d (%d%%)" | format(h.num_small_files, (h.small_file_share * 100) | round),
          adapter.size_text(h.total_bytes), h.num_tombstones, h.num_log_files, h.num_partitions,
          h.partition_columns | join(', ') or '-')) -%}
  {%- endfor -%}
  {{ return(lines | join('\n')) }}
{% endmacro %}
