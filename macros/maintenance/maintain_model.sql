{#-
  Post-hook: run the maintenance that is due for the model just built (see README, "Automatic
  maintenance"). Project-wide in dbt_project.yml:  +post-hook: "{{ maintain_model() }}"
  Renders no SQL; the work happens in the adapter, right after the model's table is written.
-#}
{% macro maintain_model() %}
  {#- var maintenance_post_hook=false turns the hook off for a run (bench/posthook_bench.py) -#}
  {%- if execute and var('maintenance_post_hook', true)
        and model.config.get('materialized') in ('table', 'incremental') -%}
    {%- set summary = adapter.maintain_after_build(model, invocation_id, shop_lakehouse.maintenance_history()) -%}
    {%- if summary -%}
      {{ log("maintenance " ~ model.name ~ ": " ~ summary, info=true) }}
    {%- endif -%}
  {%- endif -%}
{% endmacro %}
