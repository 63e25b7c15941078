{#-
  Per model: files, small files, bytes, log files, tombstones, reclaimable bytes, and the last
  run of each op with its outcome.  dbt run-operation maintenance_report
-#}
{% macro maintenance_report(select=none, exclude=none) %}
  {%- if execute -%}
    {%- set report = adapter.maintenance_report(shop_lakehouse.maintenance_nodes(), select, exclude, shop_lakehouse.maintenance_history()) -%}
    {{ print(report) }}
    {{ return(report) }}
  {%- endif -%}
{% endmacro %}
