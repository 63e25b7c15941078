{{ config(tags=['weekly']) }}
-- TPC-H Q9: profit on green parts by supplier nation and year (a weekly report)
select s.nation_name, year(i.order_date) as o_year,
       sum(i.revenue - i.supply_cost * i.quantity) as profit
from {{ ref('fct_orders_items') }} i
join {{ ref('dim_part') }} p on i.part_key = p.part_key
join {{ ref('dim_supplier') }} s on i.supplier_key = s.supplier_key
where p.part_name like '%green%'
group by s.nation_name, year(i.order_date)
