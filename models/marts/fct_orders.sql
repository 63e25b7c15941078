{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='order_id',
        partition_by=['order_date'],
        maintenance_zorder_by=['customer_id', 'order_id'],
        maintenance_vacuum_retention_hours=336,
    )
}}

-- The order fact, loaded batch by batch: new orders are inserted, status changes update the
-- order in its (older) date partition. This is what leaves small files, tombstones and a long
-- Delta log behind, the state that table maintenance exists for.

with

orders as (
    select * from {{ ref('stg_orders') }}
    {% if is_incremental() %}
    where updated_at > (select max(updated_at) from {{ this }})
    {% endif %}
),

products as (
    select * from {{ ref('stg_products') }}
),

final as (
    select
        orders.order_id,
        orders.customer_id,
        orders.product_id,
        orders.quantity,
        cast(orders.quantity * products.unit_price as decimal(12, 2)) as amount,
        orders.status,
        orders.ordered_at,
        orders.updated_at,
        orders.load_batch,
        orders.order_date
    from orders
    inner join products on orders.product_id = products.product_id
)

select * from final
