{#-
  The relation of a built model, by name, and its node; a compile error naming the caller
  otherwise. Shared by the single-table run-operations (vacuum_table, cleanup_logs_table);
  call it under {% if execute %} (it reads the graph and the catalog).
-#}
{% macro built_relation(model, caller_name) %}
  {%- if model is none -%}
    {{ exceptions.raise_compiler_error(caller_name ~ ": pass the model name, e.g. --args '{model: fct_orders}'") }}
  {%- endif -%}
  {%- set nodes = graph.nodes.values() | selectattr('name', 'equalto', model) | list -%}
  {%- if nodes | length == 0 -%}
    {{ exceptions.raise_compiler_error(caller_name ~ ": no model named '" ~ model ~ "'") }}
  {%- endif -%}
  {%- set node = nodes[0] -%}
  {%- set relation = adapter.get_relation(node.database, node.schema, node.alias) -%}
  {%- if relation is none -%}
    {{ exceptions.raise_compiler_error(caller_name ~ ": '" ~ model ~ "' has not been built yet") }}
  {%- endif -%}
  {{ return({'node': node, 'relation': relation}) }}
{% endmacro %}
