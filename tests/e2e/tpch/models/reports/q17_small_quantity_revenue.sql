-- TPC-H Q17: yearly revenue lost without small orders of one brand and container
with average as (
  select part_key, 0.2 * avg(quantity) as small
  from {{ ref('fct_orders_items') }}
  group by part_key
)
select sum(i.extended_price) / 7.0 as avg_yearly
from {{ ref('fct_orders_items') }} i
join {{ ref('dim_part') }} p on i.part_key = p.part_key
join average a on i.part_key = a.part_key
where p.brand = 'Brand#23' and p.container = 'MED BOX' and i.quantity < a.small
