with

source as (
    select * from {{ ref('landing_orders') }}
),

renamed as (
    select
        order_id,
        customer_id,
        product_id,
        quantity,
        lower(status) as status,
        ordered_at,
        cast(ordered_at as date) as order_date,
        updated_at,
        load_batch
    from source
)

select * from renamed
