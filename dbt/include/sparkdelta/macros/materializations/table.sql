{#- dbt-spark 1.11's table materialization, verbatim but for its first line: the model's
    maintenance_* config is checked (adapter.validate_maintenance_config) before anything else,
    so a misspelt key or a bad value fails the model before a pre-hook, a drop or its SQL runs,
    and a refused config never leaves a new table version behind. A copy rather than a wrapper
    around materialization_table_spark(): dbt runs a Python model's job only when the
    materialization itself calls statement() (submit_python_job checks the macro stack).
    Source: dbt-spark 1.11 (dbt/include/spark/macros/materializations/table.sql), Apache License 2.0,
    copyright dbt Labs; keep in step with dbt-spark upgrades. -#}
{% materialization table, adapter='sparkdelta', supported_languages=['sql', 'python'] %}
  {%- do adapter.validate_maintenance_config(model, var('maintenance_post_hook', true)) -%}
  {%- set language = model['language'] -%}
  {%- set identifier = model['alias'] -%}
  {%- set grant_config = config.get('grants') -%}

  {%- set old_relation = adapter.get_relation(database=database, schema=schema, identifier=identifier) -%}
  {%- set target_relation = api.Relation.create(identifier=identifier,
                                                schema=schema,
                                                database=database,
                                                type='table') -%}

  {{ run_hooks(pre_hooks) }}

  -- setup: if the target relation already exists, drop it
  -- in case if the existing and future table is delta or iceberg, we want to do a
  -- create or replace table instead of dropping, so we don't have the table unavailable
  {% if old_relation is not none %}
    {% set is_delta = (old_relation.is_delta and config.get('file_format', validator=validation.any[basestring]) == 'delta') %}
    {% set is_iceberg = (old_relation.is_iceberg and config.get('file_format', validator=validation.any[basestring]) == 'iceberg') %}
    {% set old_relation_type = old_relation.type %}
  {% else %}
    {% set is_delta = false %}
    {% set is_iceberg = false %}
    {% set old_relation_type = target_relation.type %}
  {% endif %}

  {% if not is_delta and not is_iceberg %}
    {% set existing_relation = target_relation %}
    {{ adapter.drop_relation(existing_relation.incorporate(type=old_relation_type)) }}
  {% endif %}

  -- build model
  {%- call statement('main', language=language) -%}
    {{ create_table_as(False, target_relation, compiled_code, language) }}
  {%- endcall -%}

  {% set should_revoke = should_revoke(old_relation, full_refresh_mode=True) %}
  {% do apply_grants(target_relation, grant_config, should_revoke) %}

  {% do persist_docs(target_relation, model) %}

  {% do persist_constraints(target_relation, model) %}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]})}}

{% endmaterialization %}
