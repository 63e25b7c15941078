{{ config(maintenance_zorder_by='auto', maintenance_target_file_size=var('items_target', '72KB'),
          maintenance_min_small_files=2) }}
with items as (
  select * from {{ ref('base_lineitem') }}
),
orders as (
  select * from {{ ref('base_orders') }}
),
costs as (
  select * from {{ ref('base_partsupp') }}
)
select
  i.order_key, i.line_number, o.order_date, o.customer_key, o.order_status,
  i.part_key, i.supplier_key, i.return_flag, i.line_status,
  i.ship_date, i.commit_date, i.receipt_date, i.ship_mode, i.ship_instruct,
  i.quantity, i.extended_price, i.discount, i.tax, c.supply_cost,
  i.extended_price * (1 - i.discount) as revenue
from items i
join orders o on i.order_key = o.order_key
join costs c on i.part_key = c.part_key and i.supplier_key = c.supplier_key
order by o.order_date
