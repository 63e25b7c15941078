{{ config(tags=['weekly']) }}
-- TPC-H Q11: German stock worth more than a share of the nation's total (a weekly report).
-- The threshold is joined, not a scalar subquery in HAVING: Sail 0.7 cannot resolve that
-- (docs/known-limits.md).
with german as (
  select part_key, available_quantity * supply_cost as value
  from {{ ref('dim_part_supplier') }}
  where supplier_nation = 'GERMANY'
),
threshold as (
  select sum(value) * 0.0001 as least from german
),
per_part as (
  select part_key, sum(value) as value from german group by part_key
)
select p.part_key, p.value
from per_part p
cross join threshold t
where p.value > t.least
