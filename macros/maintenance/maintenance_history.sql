{#- Where the maintenance history table lives: vars maintenance_history_schema (default: the
    target schema), maintenance_history_name (default maintenance_history) and
    maintenance_history_location (default: beside the project's tables). -#}
{% macro maintenance_history() %}
  {{ return({
      'schema': var('maintenance_history_schema', target.schema),
      'name': var('maintenance_history_name', 'maintenance_history'),
      'location': var('maintenance_history_location', none),
  }) }}
{% endmacro %}
