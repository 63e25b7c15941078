{#-
  Per model: files, small files, bytes, log files, tombstones, reclaimable bytes (a VACUUM dry
  run), and the last run of each op with its outcome.
      dbt run-operation maintenance_report [--args '{select: [marts]}']
  Dispatched: see maintain_model.
-#}
{% macro maintenance_report(select=none, exclude=none) %}
  {{ return(adapter.dispatch('maintenance_report')(select, exclude)) }}
{% endmacro %}

{% macro default__maintenance_report(select, exclude) %}
  {{ exceptions.raise_compiler_error("maintenance_report: the '" ~ adapter.type() ~ "' adapter has no Delta maintenance; use type: sparkdelta") }}
{% endmacro %}

{% macro sparkdelta__maintenance_report(select, exclude) %}
  {%- if execute -%}
    {%- set report = adapter.maintenance_report(maintenance_nodes(), select, exclude, maintenance_history()) -%}
    {{ print(report) }}
    {{ return(report) }}
  {%- endif -%}
{% endmacro %}
