-- TPC-H Q8: Brazil's share of one part type in America, two years of orders
with volumes as (
  select year(i.order_date) as o_year, i.revenue as volume, s.nation_name
  from {{ ref('fct_orders_items') }} i
  join {{ ref('dim_part') }} p on i.part_key = p.part_key
  join {{ ref('dim_supplier') }} s on i.supplier_key = s.supplier_key
  join {{ ref('dim_customer') }} c on i.customer_key = c.customer_key
  where c.region_name = 'AMERICA'
    and p.part_type = 'ECONOMY ANODIZED STEEL'
    and i.order_date between date '1995-01-01' and date '1996-12-31'
)
select o_year,
       sum(case when nation_name = 'BRAZIL' then volume else 0 end) / sum(volume) as mkt_share
from volumes
group by o_year
