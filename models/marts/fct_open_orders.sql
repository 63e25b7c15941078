{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='order_id',
        tblproperties={'delta.enableDeletionVectors': 'true'},
        post_hook="delete from {{ this }} where status in ('delivered', 'returned')",
    )
}}

-- Orders still on their way (placed or shipped), merged batch by batch; an order leaves the
-- table when it is delivered or returned. The table has deletion vectors on, as Databricks
-- creates tables today: each DELETE only marks rows deleted, the files keep them until a purge
-- (REORG TABLE ... APPLY (PURGE)) or OPTIMIZE rewrites them. delta-rs cannot write such a
-- table, so its maintenance runs on Delta's own writer (a local Spark with Delta, started for
-- the run).

with

orders as (
    select * from {{ ref('stg_orders') }}
    {% if is_incremental() %}
    where updated_at > (select max(updated_at) from {{ this }})
    {% endif %}
),

final as (
    select
        order_id,
        customer_id,
        product_id,
        quantity,
        status,
        ordered_at,
        updated_at,
        load_batch
    from orders
)

select * from final
