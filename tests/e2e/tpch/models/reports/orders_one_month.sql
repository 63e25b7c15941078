-- One month of orders: the order-date filter a daily report runs
select order_priority, count(*) as orders, sum(total_price) as total
from {{ ref('fct_orders') }}
where order_date >= date '1995-03-01' and order_date < date '1995-04-01'
group by order_priority
