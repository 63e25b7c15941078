-- TPC-H Q10: customers with returned items, one quarter of orders
select c.customer_key, c.customer_name, sum(i.revenue) as revenue, c.account_balance,
       c.nation_name, c.customer_address, c.phone
from {{ ref('fct_orders_items') }} i
join {{ ref('dim_customer') }} c on i.customer_key = c.customer_key
where i.order_date >= date '1993-10-01'
  and i.order_date < date '1994-01-01'
  and i.return_flag = 'R'
group by c.customer_key, c.customer_name, c.account_balance, c.nation_name,
         c.customer_address, c.phone
order by revenue desc
limit 20
