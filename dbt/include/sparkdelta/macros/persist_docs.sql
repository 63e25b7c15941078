{#- persist_docs on the embedded engine: Sail 0.7 refuses COMMENT in CREATE TABLE AS SELECT and
    ALTER TABLE ... CHANGE/ALTER COLUMN ... COMMENT. The docs are written where Delta keeps them
    instead, through the table's log: the model description as the table description
    (metaData.description, what Spark shows as the table comment) and column descriptions as
    each field's "comment" metadata. Other engines use dbt-spark's SQL. -#}
{% macro sparkdelta__comment_clause() %}
  {%- if not adapter.is_embedded() -%}
    {{ spark__comment_clause() }}
  {%- endif -%}
{%- endmacro %}

{% macro sparkdelta__persist_docs(relation, model, for_relation, for_columns) -%}
  {%- if not adapter.is_embedded() -%}
    {% do spark__persist_docs(relation, model, for_relation, for_columns) %}
  {%- elif relation.is_delta or config.get('file_format', validator=validation.any[basestring]) == 'delta' -%}
    {%- set description = none -%}
    {%- if for_relation and config.persist_relation_docs() and model.description -%}
      {%- set description = model.description -%}
    {%- endif -%}
    {%- set column_comments = {} -%}
    {%- if for_columns and config.persist_column_docs() and model.columns -%}
      {%- set existing_columns = adapter.get_columns_in_relation(relation) | map(attribute="name") | list -%}
      {%- set filtered_columns = validate_doc_columns(relation, model.columns, existing_columns) -%}
      {%- for column_name in filtered_columns -%}
        {%- if filtered_columns[column_name]['description'] -%}
          {%- do column_comments.update({column_name: filtered_columns[column_name]['description']}) -%}
        {%- endif -%}
      {%- endfor -%}
    {%- endif -%}
    {%- if description or column_comments -%}
      {%- do adapter.delta_set_comments(relation, description, column_comments) -%}
    {%- endif -%}
  {%- endif -%}
{%- endmacro %}
