{#-
  The maintenance advisor: per selected table model, the Z-order (or liquid clustering)
  columns its readers filter and join on, from the compiled SQL of every downstream node
  (run dbt compile first), with the evidence (nodes, predicate kinds), files admitted per
  lookup now and expected after, and every case the parser could not resolve.
      dbt run-operation maintenance_advise [--args '{select: [fct_orders], as_json: true}']
  select/exclude/selector/state are dbt's selection (see maintenance_nodes).
  Dispatched: see maintain_model.
-#}
{% macro maintenance_advise(select=none, exclude=none, selector=none, state=none, as_json=false) %}
  {{ refuse_unknown_arguments('maintenance_advise', kwargs, ['select', 'exclude', 'selector', 'state', 'as_json']) }}
  {{ return(adapter.dispatch('maintenance_advise')(select, exclude, selector, state, as_json)) }}
{% endmacro %}

{% macro default__maintenance_advise(select, exclude, selector=none, state=none, as_json=false) %}
  {{ exceptions.raise_compiler_error("maintenance_advise: the '" ~ adapter.type() ~ "' adapter has no Delta maintenance; use type: sparkdelta") }}
{% endmacro %}

{% macro sparkdelta__maintenance_advise(select, exclude, selector=none, state=none, as_json=false) %}
  {%- if execute -%}
    {%- set advice = adapter.maintenance_advise(maintenance_nodes(select, exclude, selector, state, 'maintenance_advise'), as_json) -%}
    {{ print(advice) }}
    {{ return(advice) }}
  {%- endif -%}
{% endmacro %}
