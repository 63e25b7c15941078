select n.n_nationkey as nation_key, n.n_name as nation_name, r.r_name as region_name
from parquet.`{{ var('tpch_data') }}/nation.parquet` n
join parquet.`{{ var('tpch_data') }}/region.parquet` r on n.n_regionkey = r.r_regionkey
