{#-
  Per model: files, small files, size, log files, tombstones, reclaimable size (a VACUUM dry
  run), the next action ("optimize now", "vacuum in 5 h", "nothing due") and the last run of
  each op with its outcome; sizes in scaled units, a labelled total row.
  html: FILE writes the maintenance history as charts instead, one self-contained HTML page
  (per model: files, small files, log files, live bytes and maintenance seconds over its
  builds, what each op reclaimed, what is due next; the estate's totals). A relative FILE is
  relative to the directory dbt runs in.
      dbt run-operation maintenance_report [--args '{select: [+fct_orders], exclude: [dim_products]}' | '{selector: nightly}' | '{html: maintenance.html}']
  Dispatched: see maintain_model.
-#}
{% macro maintenance_report(select=none, exclude=none, selector=none, state=none, html=none) %}
  {{ refuse_unknown_arguments('maintenance_report', kwargs, ['select', 'exclude', 'selector', 'state', 'html']) }}
  {#- selector/state/html are passed only when given, so an override with the older signature still works -#}
  {%- if html is not none -%}
    {{ return(adapter.dispatch('maintenance_report')(select, exclude, selector, state, html)) }}
  {%- endif -%}
  {%- if selector is not none or state is not none -%}
    {{ return(adapter.dispatch('maintenance_report')(select, exclude, selector, state)) }}
  {%- endif -%}
  {{ return(adapter.dispatch('maintenance_report')(select, exclude)) }}
{% endmacro %}

{% macro default__maintenance_report(select, exclude, selector=none, state=none, html=none) %}
  {{ exceptions.raise_compiler_error("maintenance_report: the '" ~ adapter.type() ~ "' adapter has no Delta maintenance; use type: sparkdelta") }}
{% endmacro %}

{% macro sparkdelta__maintenance_report(select, exclude, selector=none, state=none, html=none) %}
  {%- if execute -%}
    {%- set run = adapter.maintenance_report_run(maintenance_nodes(select, exclude, selector, state, 'maintenance_report'), maintenance_history(), html) -%}
    {{ print(run.text) }}
    {#- a model whose config was refused or whose table could not be read fails the report
        (exit 1) after every other row was printed -#}
    {%- if run.problems -%}
      {{ adapter.fail_run_operation("maintenance_report: " ~ (run.problems | length) ~ " model(s) could not be reported:\n  - " ~ (run.problems | join("\n  - "))) }}
    {%- endif -%}
    {{ return(run.text) }}
  {%- endif -%}
{% endmacro %}
