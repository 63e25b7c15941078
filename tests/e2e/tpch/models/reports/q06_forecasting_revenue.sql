-- TPC-H Q6: revenue change from small discounts, one year of shipments
select sum(extended_price * discount) as revenue
from {{ ref('fct_orders_items') }}
where ship_date >= date '1994-01-01'
  and ship_date < date '1995-01-01'
  and discount between 0.05 and 0.07
  and quantity < 24
