{#- dbt clone on the embedded engine: Sail 0.7 has no SHALLOW CLONE. The clone is a new Delta
    table at the model's own location holding a copy of the deferred table's rows (a deep copy:
    later VACUUMs of either table never affect the other). Other engines: dbt-spark's shallow
    clone. -#}
{% macro sparkdelta__create_or_replace_clone(this_relation, defer_relation) %}
  {%- if adapter.is_embedded() -%}
    create or replace table {{ this_relation }}
    using delta
    {{ location_clause() }}
    as select * from {{ defer_relation }}
  {%- else -%}
    {{ spark__create_or_replace_clone(this_relation, defer_relation) }}
  {%- endif -%}
{% endmacro %}

{#- dbt's clone materialization looks up "materialization_view_<adapter type>" and falls back to
    dbt's default view materialization (which renames relations, something Sail cannot do);
    this makes it find dbt-spark's. -#}
{% materialization view, adapter='sparkdelta' -%}
  {{ return(materialization_view_spark()) }}
{%- endmaterialization %}
