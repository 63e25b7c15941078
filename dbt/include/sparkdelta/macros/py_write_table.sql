{#- Materialise a Python model's DataFrame as a Delta table at its fixed location.
    The adapter's session job helper runs this code with `spark` bound to the engine's session
    and registers the table in the catalog afterwards. -#}
{% macro sparkdelta__py_write_table(compiled_code, target_relation) -%}
{%- set location = adapter.model_location(
      target_relation.schema, target_relation.identifier, config.get('location_root')) -%}
{%- set partition_by = config.get('partition_by') -%}
{%- if partition_by is string -%}{%- set partition_by = [partition_by] -%}{%- endif -%}
{{ compiled_code }}
# --- sparkdelta: materialise the model's result as a Delta table --- #
dbt = dbtObj(spark.table)
df = model(dbt, spark)
try:
    import pandas
    if isinstance(df, pandas.DataFrame):
        df = spark.createDataFrame(df)
except ImportError:
    pass
writer = df.write.format("delta").mode("overwrite").option("overwriteSchema", "true")
{%- if partition_by %}
writer = writer.partitionBy({{ partition_by | map('tojson') | join(', ') }})
{%- endif %}
{%- if location %}
writer.save({{ location | tojson }})
{%- else %}
writer.saveAsTable("{{ target_relation }}")
{%- endif %}
{%- endmacro %}
