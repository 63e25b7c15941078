-- Small and rebuilt in full every run: no maintenance needed (the one model opting out).
{{ config(maintenance_enabled=false) }}

with

products as (
    select * from {{ ref('stg_products') }}
),

final as (
    select
        product_id,
        product_name,
        category,
        unit_price,
        unit_price >= 50 as is_premium
    from products
)

select * from final
