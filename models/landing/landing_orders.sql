-- Simulated delivery of one load batch from the order system (var `batch`): the batch's new
-- orders plus status changes of orders from the previous eight batches. Order attributes are a
-- deterministic function of order_id, so a status change repeats them unchanged.
{%- set batch = var('batch') | int -%}
{%- set per_batch = var('orders_per_batch') | int -%}
{%- set seconds_per_batch = (86400 // (var('batches_per_day') | int)) -%}
{%- set first_changed = ([batch - 8, 0] | max) * per_batch %}

with

new_orders as (
    select id as order_id, 'placed' as status
    from range({{ batch * per_batch }}, {{ (batch + 1) * per_batch }})
),

status_changes as (
    -- about a quarter of the recent orders move on in each batch
    select
        id as order_id,
        case
            when {{ batch }} - floor(id / {{ per_batch }}) <= 2 then 'shipped'
            when pmod(hash(id, 'returned'), 10) = 0 then 'returned'
            else 'delivered'
        end as status
    from range({{ first_changed }}, {{ batch * per_batch }})
    where pmod(hash(id, {{ batch }}), 4) = 0
),

batch_orders as (
    select * from new_orders
    union all
    select * from status_changes
)

select
    order_id,
    cast(pmod(hash(order_id, 'customer'), {{ var('customers') | int }}) + 1 as bigint) as customer_id,
    cast(pmod(hash(order_id, 'product'), 20) + 1 as bigint) as product_id,
    cast(pmod(hash(order_id, 'quantity'), 3) + 1 as int) as quantity,
    status,
    timestamp_seconds(
        unix_timestamp(timestamp '{{ var("start_date") }} 00:00:00')
        + floor(order_id / {{ per_batch }}) * {{ seconds_per_batch }}
        + pmod(hash(order_id, 'minute'), {{ seconds_per_batch }})
    ) as ordered_at,
    timestamp_seconds(
        unix_timestamp(timestamp '{{ var("start_date") }} 00:00:00')
        + {{ (batch + 1) * seconds_per_batch }}
    ) as updated_at,
    {{ batch }} as load_batch
from batch_orders
