-- TPC-H Q12: late lines by ship mode and order priority, one year of receipts
select i.ship_mode,
       sum(case when o.order_priority in ('1-URGENT', '2-HIGH') then 1 else 0 end) as high_lines,
       sum(case when o.order_priority in ('1-URGENT', '2-HIGH') then 0 else 1 end) as low_lines
from {{ ref('fct_orders_items') }} i
join {{ ref('fct_orders') }} o on i.order_key = o.order_key
where i.ship_mode in ('MAIL', 'SHIP')
  and i.commit_date < i.receipt_date
  and i.ship_date < i.commit_date
  and i.receipt_date >= date '1994-01-01'
  and i.receipt_date < date '1995-01-01'
group by i.ship_mode
