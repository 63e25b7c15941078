-- TPC-H Q1: pricing summary, everything shipped up to 90 days before the last ship date
select return_flag, line_status, sum(quantity) as sum_qty, sum(extended_price) as sum_base,
       sum(revenue) as sum_disc_price, sum(revenue * (1 + tax)) as sum_charge,
       avg(quantity) as avg_qty, avg(discount) as avg_disc, count(*) as count_order
from {{ ref('fct_orders_items') }}
where ship_date <= date '1998-12-01' - interval 90 day
group by return_flag, line_status
