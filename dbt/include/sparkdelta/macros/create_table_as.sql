{#- Python models write by path through sparkdelta__py_write_table; SQL is dbt-spark's, or a
    clustered CREATE OR REPLACE when the model sets maintenance_cluster_by on an engine with
    Delta (liquid_clustering.sql). The whitespace control matters: Python code must start at
    column 0. -#}
{% macro sparkdelta__create_table_as(temporary, relation, compiled_code, language='sql') -%}
  {%- if language == 'python' -%}
    {{- sparkdelta__py_write_table(compiled_code, relation) -}}
  {%- else -%}
    {%- set columns = [] if temporary else sparkdelta_clustering_columns(warn=true) -%}
    {%- if columns and config.get('file_format', validator=validation.any[basestring]) == 'delta' -%}
      {{ sparkdelta_create_clustered_table_as(relation, compiled_code, columns) }}
    {%- else -%}
      {{ spark__create_table_as(temporary, relation, compiled_code, language) }}
    {%- endif -%}
  {%- endif -%}
{%- endmacro %}
