{#- Every model node of the project being run, packages' models included (the adapter keeps
    the table and incremental ones and applies select/exclude). -#}
{% macro maintenance_nodes() %}
  {{ return(graph.nodes.values() | selectattr('resource_type', 'equalto', 'model') | list) }}
{% endmacro %}
