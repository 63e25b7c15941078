{{ config(tags=['weekly']) }}
-- TPC-H Q13: customers by their number of orders (a weekly report)
with counts as (
  select c.customer_key, count(o.order_key) as orders
  from {{ ref('dim_customer') }} c
  left join {{ ref('fct_orders') }} o
    on c.customer_key = o.customer_key and o.order_comment not like '%special%requests%'
  group by c.customer_key
)
select orders, count(*) as customers
from counts
group by orders
