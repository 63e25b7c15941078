{#- Render table_health results as a fixed-width text table. -#}
{% macro format_table_health(rows) %}
  {%- set header = "%-32s %8s %7s %7s %9s %6s %6s %5s %7s %s" | format(
        'table', 'version', 'ckpt', 'files', 'small', 'MB', 'tombs', 'log', 'parts', 'partitioned by') -%}
  {%- set lines = [header, '-' * (header | length + 8)] -%}
  {%- for h in rows | sort(attribute='relation') -%}
    {%- do lines.append("%-32s %8d %7s %7d %9s %6.1f %6d %5d %7d %s" | format(
          h.relation, h.version, h.checkpoint_version if h.checkpoint_version is not none else '-',
          h.num_files, "%d (%d%%)" | format(h.num_small_files, (h.small_file_share * 100) | round),
          h.total_bytes / 1048576, h.num_tombstones, h.num_log_files, h.num_partitions,
          h.partition_columns | join(', ') or '-')) -%}
  {%- endfor -%}
  {{ return(lines | join('\n')) }}
{% endmacro %}
