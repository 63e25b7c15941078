{#-
  optimize every selected model, due or not (within each model's config and safety checks).
  dbt run-operation optimize_all --args '{select: [marts], exclude: [tag:landing], dry_run: true}'
-#}
{% macro optimize_all(select=none, exclude=none, dry_run=false, retention_hours=none, threads=1, time_budget_s=none) %}
  {{ return(shop_lakehouse.run_maintenance('optimize_all', ['optimize'], false, select, exclude, dry_run, retention_hours, threads, time_budget_s)) }}
{% endmacro %}
