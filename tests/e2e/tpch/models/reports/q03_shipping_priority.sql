-- TPC-H Q3: unshipped orders of one market segment by revenue
select o.order_key, sum(i.revenue) as revenue, o.order_date, o.ship_priority
from {{ ref('fct_orders') }} o
join {{ ref('fct_orders_items') }} i on o.order_key = i.order_key
join {{ ref('dim_customer') }} c on o.customer_key = c.customer_key
where c.market_segment = 'BUILDING'
  and o.order_date < date '1995-03-15'
  and i.ship_date > date '1995-03-15'
group by o.order_key, o.order_date, o.ship_priority
order by revenue desc, o.order_date
limit 10
