{#- dbt-spark's split_part, except for negative part numbers: dbt-spark indexes the array with
    a computed expression, which Sail 0.7 refuses ("extraction must be a literal");
    element_at() counts from the end for negative indexes, with the same result. -#}
{% macro sparkdelta__split_part(string_text, delimiter_text, part_number) %}
  {%- if part_number >= 0 -%}
    {{ return(spark__split_part(string_text, delimiter_text, part_number)) }}
  {%- endif -%}
  {% set split_part_expr %}
    element_at(
        split(
            {{ string_text }},
            case when regexp_extract({{ delimiter_text }}, '([^A-Za-z0-9])(.*)', 1) != '_'
                then concat('\\', {{ delimiter_text }})
                else {{ delimiter_text }} end
        ),
        {{ part_number }}
    )
  {% endset %}
  {{ return(split_part_expr) }}
{% endmacro %}
