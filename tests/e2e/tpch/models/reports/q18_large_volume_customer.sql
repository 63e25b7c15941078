{{ config(tags=['weekly']) }}
-- TPC-H Q18: customers with large orders (a weekly report). The sum is named total_quantity:
-- Sail 0.7 reads HAVING sum(quantity) as the output alias when it is named quantity
-- (docs/known-limits.md).
with large as (
  select order_key, sum(quantity) as total_quantity
  from {{ ref('fct_orders_items') }}
  group by order_key
  having sum(quantity) > 300
)
select c.customer_name, c.customer_key, o.order_key, o.order_date, o.total_price,
       l.total_quantity
from large l
join {{ ref('fct_orders') }} o on l.order_key = o.order_key
join {{ ref('dim_customer') }} c on o.customer_key = c.customer_key
order by o.total_price desc, o.order_date
limit 100
