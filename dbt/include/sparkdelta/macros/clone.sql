{#- dbt clone on every engine: a new Delta table at the model's own location holding a copy of
    the deferred table's rows (a deep copy). Not dbt-spark's SHALLOW CLONE, because
    - Sail 0.7 has no SHALLOW CLONE;
    - open-source Delta 4.4 refuses CREATE OR REPLACE ... SHALLOW CLONE onto a table that has
      rows (DELTA_UNSUPPORTED_NON_EMPTY_CLONE), so `dbt clone --full-refresh` would fail;
    - a shallow clone reads the source table's files, which the source's VACUUM deletes: the
      maintenance this project runs on the source would break the clone. -#}
{% macro sparkdelta__create_or_replace_clone(this_relation, defer_relation) %}
    create or replace table {{ this_relation }}
    using delta
    {{ location_clause() }}
    as select * from {{ defer_relation }}
{% endmacro %}

{#- dbt's clone materialization looks up "materialization_view_<adapter type>" and falls back to
    dbt's default view materialization (which renames relations, something Sail cannot do);
    this makes it find dbt-spark's. -#}
{% materialization view, adapter='sparkdelta' -%}
  {{ return(materialization_view_spark()) }}
{%- endmaterialization %}
