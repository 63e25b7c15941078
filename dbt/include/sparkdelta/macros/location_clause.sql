{#- Every table gets a fixed location: location_root/<alias> when configured, else the
    engine's managed location <warehouse>/<schema>/<alias>. A fixed location is what lets the
    embedded engine re-register tables in a new process and what maintenance ops act on. -#}
{% macro sparkdelta__location_clause() %}
  {%- set location_root = config.get('location_root', validator=validation.any[basestring]) -%}
  {%- set location = adapter.model_location(model['schema'], model['alias'], location_root) -%}
  {%- if location %}
    location '{{ location }}'
  {%- endif %}
{%- endmacro -%}
