{#-
  Called first by every run-operation macro with its kwargs (what dbt passed that the macro does
  not take): a misspelt argument fails naming it, the nearest valid one and the valid list,
  instead of dbt's bare "takes no keyword argument". A macro that mentions kwargs accepts any
  keyword argument, so the check is its own.
      {{ refuse_unknown_arguments('maintain_all', kwargs, ['select', 'exclude', ...]) }}
-#}
{% macro refuse_unknown_arguments(caller_name, given, valid) %}
  {%- if given -%}
    {%- if adapter.type() == 'sparkdelta' -%}
      {{ exceptions.raise_compiler_error(adapter.unknown_arguments_text(caller_name, given.keys() | list, valid)) }}
    {%- else -%}
      {{ exceptions.raise_compiler_error(caller_name ~ ": unknown argument(s) " ~ (given.keys() | list | sort | join(', ')) ~ ". " ~ caller_name ~ " takes: " ~ (valid | join(', ')) ~ ".") }}
    {%- endif -%}
  {%- endif -%}
{% endmacro %}
