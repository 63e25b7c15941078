{{ config(tags=['weekly']) }}
-- TPC-H Q16: suppliers per brand, type and size, without complained-about suppliers (weekly)
select p.brand, p.part_type, p.part_size, count(distinct ps.supplier_key) as supplier_cnt
from {{ ref('dim_part_supplier') }} ps
join {{ ref('dim_part') }} p on ps.part_key = p.part_key
where p.brand <> 'Brand#45'
  and p.part_type not like 'MEDIUM POLISHED%'
  and p.part_size in (49, 14, 23, 45, 19, 3, 36, 9)
  and ps.supplier_key not in (
    select supplier_key from {{ ref('dim_supplier') }}
    where supplier_comment like '%Customer%Complaints%'
  )
group by p.brand, p.part_type, p.part_size
