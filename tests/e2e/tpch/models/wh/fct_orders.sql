{{ config(maintenance_zorder_by='auto', maintenance_target_file_size=var('orders_target', '28KB'),
          maintenance_min_small_files=2) }}
with orders as (
  select * from {{ ref('base_orders') }}
),
item_totals as (
  select order_key, sum(extended_price * (1 - discount)) as item_revenue, count(*) as line_count
  from {{ ref('base_lineitem') }}
  group by order_key
)
select
  o.order_key, o.order_date, o.customer_key, o.order_status, o.order_priority, o.clerk,
  o.ship_priority, o.total_price, o.order_comment, t.item_revenue, t.line_count
from orders o
join item_totals t on o.order_key = t.order_key
order by o.order_date
