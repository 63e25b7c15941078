{#-
  Post-hook: run the maintenance that is due for the model just built (README, "Automatic
  maintenance and run-operations"). Project-wide in dbt_project.yml:
      +post-hook: "{{ maintain_model() }}"
  Renders no SQL; the work happens in the adapter, right after the model's table is written.
  Dispatched, so an adapter built on this one (or a project, with its own
  sparkdelta__maintain_model) can replace the implementation.
-#}
{% macro maintain_model() %}
  {{ return(adapter.dispatch('maintain_model')()) }}
{% endmacro %}

{#- Only adapters with the Delta maintenance methods (adapter.maintain_after_build) can do this. -#}
{% macro default__maintain_model() %}
  {{ exceptions.raise_compiler_error("maintain_model: the '" ~ adapter.type() ~ "' adapter has no Delta maintenance; use type: sparkdelta") }}
{% endmacro %}

{% macro sparkdelta__maintain_model() %}
  {#- var maintenance_post_hook=false turns the hook off for a run (bench/posthook_bench.py) -#}
  {%- if execute and var('maintenance_post_hook', true)
        and model.config.get('materialized') in ('table', 'incremental', 'snapshot') -%}
    {#- the macro itself, not its value: the adapter calls it once per invocation -#}
    {%- set summary = adapter.maintain_after_build(model, invocation_id, maintenance_history) -%}
    {%- if summary -%}
      {{ log("maintenance " ~ model.name ~ ": " ~ summary, info=true) }}
    {%- endif -%}
  {%- endif -%}
{% endmacro %}
