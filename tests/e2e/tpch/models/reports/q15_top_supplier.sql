-- TPC-H Q15: the suppliers with the most revenue in one quarter of shipments
with revenue as (
  select supplier_key, sum(revenue) as total
  from {{ ref('fct_orders_items') }}
  where ship_date >= date '1996-01-01' and ship_date < date '1996-04-01'
  group by supplier_key
)
select s.supplier_key, s.supplier_name, s.supplier_address, s.phone, r.total
from {{ ref('dim_supplier') }} s
join revenue r on s.supplier_key = r.supplier_key
where r.total = (select max(total) from revenue)
