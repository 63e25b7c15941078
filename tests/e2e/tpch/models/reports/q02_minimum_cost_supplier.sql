-- TPC-H Q2: the cheapest European supplier of each size-15 brass part
with offers as (
  select ps.part_key, ps.supplier_key, ps.supply_cost
  from {{ ref('dim_part_supplier') }} ps
  where ps.supplier_region = 'EUROPE'
),
cheapest as (
  select part_key, min(supply_cost) as supply_cost from offers group by part_key
)
select s.account_balance, s.supplier_name, s.nation_name, p.part_key, p.manufacturer
from offers o
join cheapest c on o.part_key = c.part_key and o.supply_cost = c.supply_cost
join {{ ref('dim_part') }} p on o.part_key = p.part_key
join {{ ref('dim_supplier') }} s on o.supplier_key = s.supplier_key
where p.part_size = 15 and p.part_type like '%BRASS'
order by s.account_balance desc, s.nation_name, s.supplier_name, p.part_key
limit 100
