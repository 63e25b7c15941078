{#-
  Per model: files, small files, size, log files, tombstones, reclaimable size (a VACUUM dry
  run), the next action ("optimize now", "vacuum in 5 h", "nothing due") and the last run of
  each op with its outcome; sizes in scaled units, a labelled total row.
      dbt run-operation maintenance_report [--args '{select: [+fct_orders], exclude: [dim_products]}' | '{selector: nightly}']
  Dispatched: see maintain_model.
-#}
{% macro maintenance_report(select=none, exclude=none, selector=none, state=none) %}
  {{ refuse_unknown_arguments('maintenance_report', kwargs, ['select', 'exclude', 'selector', 'state']) }}
  {#- selector/state are passed only when given, so an override with the older signature still works -#}
  {%- if selector is not none or state is not none -%}
    {{ return(adapter.dispatch('maintenance_report')(select, exclude, selector, state)) }}
  {%- endif -%}
  {{ return(adapter.dispatch('maintenance_report')(select, exclude)) }}
{% endmacro %}

{% macro default__maintenance_report(select, exclude, selector=none, state=none) %}
  {{ exceptions.raise_compiler_error("maintenance_report: the '" ~ adapter.type() ~ "' adapter has no Delta maintenance; use type: sparkdelta") }}
{% endmacro %}

{% macro sparkdelta__maintenance_report(select, exclude, selector=none, state=none) %}
  {%- if execute -%}
    {%- set run = adapter.maintenance_report_run(maintenance_nodes(select, exclude, selector, state, 'maintenance_report'), maintenance_history()) -%}
    {{ print(run.text) }}
    {#- a model whose config was refused or whose table could not be read fails the report
        (exit 1) after every other row was printed -#}
    {%- if run.problems -%}
      {{ adapter.fail_run_operation("maintenance_report: " ~ (run.problems | length) ~ " model(s) could not be reported:\n  - " ~ (run.problems | join("\n  - "))) }}
    {%- endif -%}
    {{ return(run.text) }}
  {%- endif -%}
{% endmacro %}
