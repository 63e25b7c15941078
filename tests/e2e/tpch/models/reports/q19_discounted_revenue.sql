-- TPC-H Q19: revenue of three brand, container and quantity combinations shipped by air
select sum(i.revenue) as revenue
from {{ ref('fct_orders_items') }} i
join {{ ref('dim_part') }} p on i.part_key = p.part_key
where i.ship_mode in ('AIR', 'AIR REG')
  and i.ship_instruct = 'DELIVER IN PERSON'
  and (
    (p.brand = 'Brand#12' and p.container in ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
     and i.quantity between 1 and 11 and p.part_size between 1 and 5)
    or (p.brand = 'Brand#23' and p.container in ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
     and i.quantity between 10 and 20 and p.part_size between 1 and 10)
    or (p.brand = 'Brand#34' and p.container in ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')
     and i.quantity between 20 and 30 and p.part_size between 1 and 15)
  )
