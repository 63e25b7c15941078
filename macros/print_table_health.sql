{#-
  Print the Delta table health (adapter.table_health: read from the Delta log only) of every
  table-backed model, snapshot and seed as a fixed-width table.
      dbt run-operation print_table_health [--args '{select: [fct_orders]}']
  select takes model, snapshot and seed names: a name that is none of them fails the
  run-operation (exit 1) before anything is read. A table the catalog knows (or knew) whose
  files are gone is missing: listed under the table, and the run-operation fails (exit 1).
  A model not built yet is listed as such; a selected view or ephemeral model is a warning.
-#}
{% macro print_table_health(select=none, small_file_threshold_bytes=none) %}
  {{ refuse_unknown_arguments('print_table_health', kwargs, ['select', 'small_file_threshold_bytes']) }}
  {{ return(adapter.dispatch('print_table_health')(select, small_file_threshold_bytes)) }}
{% endmacro %}

{% macro default__print_table_health(select, small_file_threshold_bytes) %}
  {{ exceptions.raise_compiler_error("print_table_health: the '" ~ adapter.type() ~ "' adapter has no Delta maintenance; use type: sparkdelta") }}
{% endmacro %}

{% macro sparkdelta__print_table_health(select, small_file_threshold_bytes) %}
  {%- if select is string -%}{%- set select = [select] -%}{%- endif -%}
  {%- if execute -%}
    {%- set nodes = graph.nodes.values() | selectattr('resource_type', 'in', ['model', 'snapshot', 'seed']) | list -%}
    {%- if select is not none -%}
      {%- set names = nodes | map(attribute='name') | list -%}
      {%- set unknown = select | reject('in', names) | list -%}
      {%- if unknown -%}
        {{ exceptions.raise_compiler_error("print_table_health: the selection criterion '" ~ (unknown | join("', '")) ~ "' does not match any model, snapshot or seed (select takes their names)") }}
      {%- endif -%}
    {%- endif -%}
    {%- set rows, missing, not_built = [], [], [] -%}
    {%- for node in nodes if select is none or node.name in select -%}
      {%- if node.config.materialized not in ('table', 'incremental', 'seed', 'snapshot') -%}
        {%- if select is not none -%}
          {%- do exceptions.warn("print_table_health: " ~ node.name ~ " is materialized as " ~ node.config.materialized ~ ": it has no Delta table") -%}
        {%- endif -%}
      {%- else -%}
        {%- set relation = adapter.get_relation(node.database, node.schema, node.alias) -%}
        {#- not in the catalog: the adapter says whether it is missing or not built yet -#}
        {%- if relation is none -%}
          {%- set relation = api.Relation.create(schema=node.schema, identifier=node.alias) -%}
        {%- endif -%}
        {%- set health = adapter.table_health(relation, small_file_threshold_bytes) -%}
        {%- if 'missing' in health -%}
          {%- do missing.append((node.name, health.missing)) -%}
        {%- elif 'not_built' in health -%}
          {%- do not_built.append((node.name, health.not_built)) -%}
        {%- else -%}
          {%- do rows.append(health) -%}
        {%- endif -%}
      {%- endif -%}
    {%- endfor -%}
    {%- set lines = [format_table_health(rows)] -%}
    {%- for name, reason in missing -%}
      {%- do lines.append("%-32s missing: %s" | format(name, reason)) -%}
    {%- endfor -%}
    {%- for name, reason in not_built -%}
      {%- do lines.append("%-32s %s" | format(name, reason)) -%}
    {%- endfor -%}
    {{ print(lines | join('\n')) }}
    {%- if missing -%}
      {{ adapter.fail_run_operation("print_table_health: " ~ (missing | length) ~ " table(s) missing:\n  - " ~ (missing | map('join', ': ') | join("\n  - "))) }}
    {%- endif -%}
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
