{{ config(tags=['weekly']) }}
-- TPC-H Q21: Saudi suppliers alone late on multi-supplier orders (a weekly report)
select s.supplier_name, count(*) as numwait
from {{ ref('fct_orders_items') }} l1
join {{ ref('dim_supplier') }} s on l1.supplier_key = s.supplier_key
where l1.order_status = 'F'
  and l1.receipt_date > l1.commit_date
  and s.nation_name = 'SAUDI ARABIA'
  and exists (
    select 1 from {{ ref('fct_orders_items') }} l2
    where l2.order_key = l1.order_key and l2.supplier_key <> l1.supplier_key
  )
  and not exists (
    select 1 from {{ ref('fct_orders_items') }} l3
    where l3.order_key = l1.order_key and l3.supplier_key <> l1.supplier_key
      and l3.receipt_date > l3.commit_date
  )
group by s.supplier_name
order by numwait desc, s.supplier_name
limit 100
