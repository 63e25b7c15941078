{#- The catalog questions and the one registration the adapter's maintenance bridge asks over
    dbt's connection (dbt/adapters/sparkdelta/bridge/locator.py, history_catalog.py). Each returns the
    statement's agate table; the bridge reads Location rows from it. -#}

{#- One table's SHOW TABLE EXTENDED row (its information block holds the Location). -#}
{% macro sparkdelta__show_table_extended(schema, identifier) -%}
  {% call statement('sparkdelta_show_table_extended', fetch_result=True, auto_begin=False) -%}
    show table extended in {{ schema }} like '{{ identifier }}'
  {%- endcall %}
  {{ return(load_result('sparkdelta_show_table_extended').table) }}
{%- endmacro %}

{#- For catalogs whose SHOW TABLE EXTENDED omits the location: a Location row among the rest. -#}
{% macro sparkdelta__describe_table_extended(relation) -%}
  {% call statement('sparkdelta_describe_table_extended', fetch_result=True, auto_begin=False) -%}
    describe table extended {{ relation }}
  {%- endcall %}
  {{ return(load_result('sparkdelta_describe_table_extended').table) }}
{%- endmacro %}

{#- A schema's properties, with its Location (where the history goes on a cluster). -#}
{% macro sparkdelta__describe_schema_extended(schema) -%}
  {% call statement('sparkdelta_describe_schema_extended', fetch_result=True, auto_begin=False) -%}
    describe schema extended {{ schema }}
  {%- endcall %}
  {{ return(load_result('sparkdelta_describe_schema_extended').table) }}
{%- endmacro %}

{#- Register an existing Delta table (the maintenance history) in the catalog by its location. -#}
{% macro sparkdelta__register_delta_location(schema, identifier, location) -%}
  {% call statement('sparkdelta_create_schema', auto_begin=False) -%}
    create schema if not exists {{ schema }}
  {%- endcall %}
  {% call statement('sparkdelta_register_delta_location', auto_begin=False) -%}
    create table if not exists {{ schema }}.{{ identifier }} using delta location '{{ location }}'
  {%- endcall %}
{%- endmacro %}
