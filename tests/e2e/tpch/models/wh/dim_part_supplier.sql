select ps.part_key, ps.supplier_key, ps.available_quantity, ps.supply_cost,
       s.nation_name as supplier_nation, s.region_name as supplier_region
from {{ ref('base_partsupp') }} ps
join {{ ref('dim_supplier') }} s on ps.supplier_key = s.supplier_key
