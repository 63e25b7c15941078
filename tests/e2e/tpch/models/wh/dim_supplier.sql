select s.supplier_key, s.supplier_name, s.supplier_address, s.phone, s.account_balance,
       s.supplier_comment, s.nation_key, n.nation_name, n.region_name
from {{ ref('base_supplier') }} s
join {{ ref('base_nation') }} n on s.nation_key = n.nation_key
