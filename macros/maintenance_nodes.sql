{#- The model nodes a maintenance run-operation works on: dbt's selection (select, exclude,
    selector from selectors.yml, state for state: methods), resolved by dbt's own selector on
    this invocation's manifest (adapter.maintenance_selection), as `dbt ls --select` would.
    Nothing given: every model (or the project's default selector, as in dbt). Each criterion
    that reaches no table is a dbt warning naming it. The adapter then keeps the table and
    incremental models and the snapshots. -#}
{% macro maintenance_nodes(select=none, exclude=none, selector=none, state=none, caller_name='maintenance') %}
  {%- set models = graph.nodes.values() | selectattr('resource_type', 'in', ['model', 'snapshot']) | list -%}
  {%- set selection = adapter.maintenance_selection(select, exclude, selector, state) -%}
  {%- for warning in selection.warnings -%}
    {%- do exceptions.warn(caller_name ~ ": " ~ warning) -%}
  {%- endfor -%}
  {%- if selection.unique_ids is none -%}
    {{ return(models) }}
  {%- endif -%}
  {{ return(models | selectattr('unique_id', 'in', selection.unique_ids) | list) }}
{% endmacro %}
