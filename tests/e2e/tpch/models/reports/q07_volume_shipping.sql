-- TPC-H Q7: trade between France and Germany, two years of shipments
select s.nation_name as supp_nation, c.nation_name as cust_nation,
       year(i.ship_date) as l_year, sum(i.revenue) as revenue
from {{ ref('fct_orders_items') }} i
join {{ ref('dim_supplier') }} s on i.supplier_key = s.supplier_key
join {{ ref('dim_customer') }} c on i.customer_key = c.customer_key
where i.ship_date between date '1995-01-01' and date '1996-12-31'
  and ((s.nation_name = 'FRANCE' and c.nation_name = 'GERMANY')
    or (s.nation_name = 'GERMANY' and c.nation_name = 'FRANCE'))
group by s.nation_name, c.nation_name, year(i.ship_date)
