-- TPC-H Q5: revenue through local suppliers in Asia, one year of orders
select c.nation_name, sum(i.revenue) as revenue
from {{ ref('fct_orders_items') }} i
join {{ ref('dim_customer') }} c on i.customer_key = c.customer_key
join {{ ref('dim_supplier') }} s on i.supplier_key = s.supplier_key
where c.region_name = 'ASIA'
  and c.nation_key = s.nation_key
  and i.order_date >= date '1994-01-01'
  and i.order_date < date '1995-01-01'
group by c.nation_name
