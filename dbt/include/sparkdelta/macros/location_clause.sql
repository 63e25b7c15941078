{#- Every table gets a fixed location: location_root/<alias> when configured, else the
    engine's managed location <warehouse>/<schema>/<alias>. A fixed location is what lets the
    embedded engine re-register tables in a new process and what maintenance ops act on. -#}
{% macro sparkdelta__location_clause() %}
  {%- set location_root = config.get('location_root', validator=validation.any[basestring]) -%}
  {%- set identifier = model['alias'] -%}
  {%- if location_root is not none %}
    location '{{ location_root }}/{{ identifier }}'
  {%- else -%}
    {%- set managed = adapter.managed_location(model['schema'], identifier) -%}
    {%- if managed %}
    location '{{ managed }}'
    {%- endif -%}
  {%- endif %}
{%- endmacro -%}
