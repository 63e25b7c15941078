-- TPC-H Q20: Canadian suppliers with excess stock of forest parts, one year of shipments
with shipped as (
  select part_key, supplier_key, 0.5 * sum(quantity) as half
  from {{ ref('fct_orders_items') }}
  where ship_date >= date '1994-01-01' and ship_date < date '1995-01-01'
  group by part_key, supplier_key
)
select distinct s.supplier_name, s.supplier_address
from {{ ref('dim_part_supplier') }} ps
join {{ ref('dim_part') }} p on ps.part_key = p.part_key
join {{ ref('dim_supplier') }} s on ps.supplier_key = s.supplier_key
join shipped sh on ps.part_key = sh.part_key and ps.supplier_key = sh.supplier_key
where p.part_name like 'forest%'
  and s.nation_name = 'CANADA'
  and ps.available_quantity > sh.half
