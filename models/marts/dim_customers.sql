with

customers as (
    select * from {{ ref('stg_customers') }}
),

final as (
    select
        customer_id,
        customer_name,
        country_code,
        signed_up_on,
        case when country_code in ('DE', 'FR', 'NL', 'SE') then 'EU' else 'non-EU' end as region
    from customers
)

select * from final
