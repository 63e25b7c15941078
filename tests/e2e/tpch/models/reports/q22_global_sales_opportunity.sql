{{ config(tags=['weekly']) }}
-- TPC-H Q22: well-funded customers of seven country codes who never ordered (weekly)
with candidates as (
  select substring(phone, 1, 2) as country_code, account_balance, customer_key
  from {{ ref('dim_customer') }}
  where substring(phone, 1, 2) in ('13', '31', '23', '29', '30', '18', '17')
)
select country_code, count(*) as customers, sum(account_balance) as balance
from candidates c
where account_balance > (select avg(account_balance) from candidates where account_balance > 0)
  and not exists (select 1 from {{ ref('fct_orders') }} o where o.customer_key = c.customer_key)
group by country_code
