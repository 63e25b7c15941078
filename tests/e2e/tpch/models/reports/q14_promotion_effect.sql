-- TPC-H Q14: the promotional parts' share of one month's revenue
select 100.0 * sum(case when p.part_type like 'PROMO%' then i.revenue else 0 end)
       / sum(i.revenue) as promo_revenue
from {{ ref('fct_orders_items') }} i
join {{ ref('dim_part') }} p on i.part_key = p.part_key
where i.ship_date >= date '1995-09-01'
  and i.ship_date < date '1995-10-01'
