{#- Every model node of the project (the adapter keeps the table and incremental ones). -#}
{% macro maintenance_nodes() %}
  {{ return(graph.nodes.values() | selectattr('resource_type', 'equalto', 'model') | list) }}
{% endmacro %}
