{#- insert_overwrite (and microbatch, which wraps it) with partition_by is a dynamic partition
    overwrite: the partitions the new rows hold are replaced, the others kept. dbt-spark writes
    it as INSERT OVERWRITE ... PARTITION under partitionOverwriteMode=DYNAMIC, which the embedded
    engine (Sail 0.7) refuses. Same result here:
    - Delta (any engine): INSERT INTO t REPLACE WHERE <exactly those partitions>, one commit;
    - other formats on the embedded engine: the files of those partitions are listed, the new
      rows inserted, then the listed files deleted (a failed insert deletes nothing).
    Without partition_by, and on other engines for non-Delta tables, dbt-spark's SQL is used. -#}
{% macro get_insert_overwrite_sql(source_relation, target_relation, existing_relation) %}
  {%- set partition_by = config.get('partition_by', validator=validation.any[list, basestring]) -%}
  {%- set dest_columns = adapter.get_columns_in_relation(target_relation) -%}
  {%- set dest_cols_csv = dest_columns | map(attribute='quoted') | join(', ') -%}
  {%- if partition_by and existing_relation.is_delta -%}
    {%- set predicate = adapter.replace_where_predicate(source_relation, target_relation, partition_by) -%}
    insert into table {{ target_relation }}
    {%- if predicate %}
    replace where {{ predicate }}
    {%- endif %}
    select {{ dest_cols_csv }} from {{ source_relation }}
  {%- elif partition_by and not existing_relation.is_iceberg and adapter.is_embedded() -%}
    {%- set stale_files = adapter.stale_partition_files(source_relation, target_relation, partition_by) -%}
    {%- call statement('insert_new_partitions') -%}
      insert into table {{ target_relation }}
      select {{ dest_cols_csv }} from {{ source_relation }}
    {%- endcall -%}
    {%- do adapter.delete_table_files(target_relation, stale_files) -%}
    {#- the rows are in; the statement dbt runs as 'main' only reports it -#}
    select {{ stale_files | length }} as replaced_files
  {%- else -%}
    {{ dbt_spark_insert_overwrite_sql(source_relation, target_relation, existing_relation, dest_cols_csv) }}
  {%- endif -%}
{% endmacro %}

{#- dbt-spark's get_insert_overwrite_sql, verbatim (this package's macro of the same name
    takes its place). -#}
{% macro dbt_spark_insert_overwrite_sql(source_relation, target_relation, existing_relation, dest_cols_csv) %}
    {% if existing_relation.is_iceberg %}
      insert overwrite {{ target_relation }}
    {% else %}
      insert overwrite table {{ target_relation }}
      {{ partition_cols(label="partition") }}
    {% endif %}
    select {{dest_cols_csv}} from {{ source_relation }}
{% endmacro %}


{#- on_schema_change (append_new_columns, sync_all_columns): Sail refuses ALTER TABLE ... ADD
    COLUMNS; on the embedded engine a Delta table gets its new columns through Delta schema
    evolution (a metadata commit in its log), then is re-registered so the catalog sees them.
    Dropping columns stays refused, as dbt-spark does for Delta. -#}
{% macro sparkdelta__alter_relation_add_remove_columns(relation, add_columns, remove_columns) %}
  {%- if add_columns and not remove_columns and relation.is_delta and adapter.is_embedded() -%}
    {%- do adapter.delta_add_columns(relation, add_columns) -%}
  {%- else -%}
    {{ spark__alter_relation_add_remove_columns(relation, add_columns, remove_columns) }}
  {%- endif -%}
{% endmacro %}
