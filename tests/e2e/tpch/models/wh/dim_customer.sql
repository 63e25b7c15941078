select c.customer_key, c.customer_name, c.customer_address, c.phone, c.account_balance,
       c.market_segment, c.nation_key, n.nation_name, n.region_name
from {{ ref('base_customer') }} c
join {{ ref('base_nation') }} n on c.nation_key = n.nation_key
