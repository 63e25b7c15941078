-- Simulated export of the shop's customer base, generated locally (no downloads).
-- Every attribute is a deterministic function of customer_id, so rebuilds are reproducible.
select
    id as customer_id,
    concat('Customer ', cast(id as string)) as customer_name,
    element_at(
        array('DE', 'FR', 'NL', 'US', 'GB', 'SE'),
        cast(pmod(hash(id, 'country'), 6) + 1 as int)
    ) as country_code,
    date_add(date '2023-01-01', cast(pmod(hash(id, 'signup'), 365) as int)) as signed_up_on
from range(1, {{ var('customers') | int }} + 1)
