{#- Liquid clustering: a model's maintenance_cluster_by (alias: dbt-databricks'
    liquid_clustered_by) becomes Delta's CLUSTER BY on engines with Delta. The table is created
    clustered (sparkdelta__create_table_as); an incremental model whose columns changed gets
    ALTER TABLE ... CLUSTER BY before its new rows land, and the maintenance that follows
    (python_ops' clustering OPTIMIZE) then runs OPTIMIZE FULL once. The embedded engine (Sail)
    cannot create clustered tables: the model is built unclustered, with a warning. -#}

{#- The columns to cluster by on this engine: [] when the model names none or the engine
    cannot cluster (then warns, once per table creation). -#}
{% macro sparkdelta_clustering_columns(warn=false) -%}
  {%- set columns = adapter.clustering_columns(model) -%}
  {%- if columns and adapter.is_embedded() -%}
    {%- if warn -%}{%- do adapter.warn_cannot_cluster(model) -%}{%- endif -%}
    {{ return([]) }}
  {%- endif -%}
  {{ return(columns) }}
{%- endmacro %}

{% macro sparkdelta_cluster_by_list(columns) -%}
  {%- for column in columns -%}
    {{ adapter.quote(column) }}{{ ", " if not loop.last }}
  {%- endfor -%}
{%- endmacro %}

{#- An incremental model's existing table: clustered on the model's columns, altered if not. -#}
{% macro sparkdelta_sync_clustering(relation) %}
  {%- set columns = sparkdelta_clustering_columns() -%}
  {%- if columns and execute -%}
    {%- set detail = run_query('describe detail ' ~ relation) -%}
    {%- set current = adapter.column_list(detail.columns['clusteringColumns'].values()[0]) -%}
    {%- if current != columns -%}
      {%- call statement('alter_clustering') -%}
        alter table {{ relation }} cluster by ({{ sparkdelta_cluster_by_list(columns) }})
      {%- endcall -%}
    {%- endif -%}
  {%- endif -%}
{% endmacro %}

{#- dbt-spark's CREATE OR REPLACE TABLE ... AS SELECT with CLUSTER BY in place of PARTITIONED BY
    and CLUSTERED BY (bucketing): dbt-spark 1.11's spark__create_table_as, SQL branch. -#}
{% macro sparkdelta_create_clustered_table_as(relation, compiled_code, columns) -%}
  create or replace table {{ relation }}
  {%- set contract_config = config.get('contract') -%}
  {%- if contract_config.enforced -%}
    {{ get_assert_columns_equivalent(compiled_code) }}
    {%- set compiled_code = get_select_subquery(compiled_code) %}
  {% endif %}
  {{ file_format_clause() }}
  {{ options_clause() }}
  {{ tblproperties_clause() }}
  cluster by ({{ sparkdelta_cluster_by_list(columns) }})
  {{ location_clause() }}
  {{ comment_clause() }}
  as
  {{ compiled_code }}
{%- endmacro %}
