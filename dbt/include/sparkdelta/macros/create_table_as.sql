{#- Python models write by path through sparkdelta__py_write_table; SQL is dbt-spark's.
    The whitespace control matters: Python code must start at column 0. -#}
{% macro sparkdelta__create_table_as(temporary, relation, compiled_code, language='sql') -%}
  {%- if language == 'python' -%}
    {{- sparkdelta__py_write_table(compiled_code, relation) -}}
  {%- else -%}
    {{ spark__create_table_as(temporary, relation, compiled_code, language) }}
  {%- endif -%}
{%- endmacro %}
