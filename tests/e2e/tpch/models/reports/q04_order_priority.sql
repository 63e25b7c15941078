-- TPC-H Q4: orders of one quarter with a line received after its commit date
select o.order_priority, count(*) as order_count
from {{ ref('fct_orders') }} o
where o.order_date >= date '1993-07-01'
  and o.order_date < date '1993-10-01'
  and exists (
    select 1 from {{ ref('fct_orders_items') }} i
    where i.order_key = o.order_key and i.commit_date < i.receipt_date
  )
group by o.order_priority
