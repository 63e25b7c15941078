{#-
  Run whatever maintenance is due (config, table health, history) for every selected model.
  dbt run-operation maintain_all --args '{threads: 2, time_budget_s: 600}'
-#}
{% macro maintain_all(select=none, exclude=none, dry_run=false, retention_hours=none, threads=1, time_budget_s=none, ops=none) %}
  {{ return(shop_lakehouse.run_maintenance('maintain_all', ops, true, select, exclude, dry_run, retention_hours, threads, time_budget_s)) }}
{% endmacro %}
