{#-
  Where the maintenance history table lives, for every project on this adapter (no dbt source
  needed): vars maintenance_history_schema (default: the target schema),
  maintenance_history_name (default maintenance_history) and maintenance_history_location
  (default: none, and the adapter puts it beside the project's tables, i.e. where a model of
  that schema and name would go). The adapter registers it in the catalog after its first
  write (or creates it empty before a run's first node when the project declares it as a
  source), so a project may also declare it as a source (README, "Maintenance history as a
  dbt source").
-#}
{% macro maintenance_history() %}
  {{ return({
      'schema': var('maintenance_history_schema', target.schema),
      'name': var('maintenance_history_name', 'maintenance_history'),
      'location': var('maintenance_history_location', none),
  }) }}
{% endmacro %}
