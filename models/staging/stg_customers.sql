with

source as (
    select * from {{ ref('landing_customers') }}
),

renamed as (
    select
        customer_id,
        customer_name,
        upper(country_code) as country_code,
        signed_up_on
    from source
)

select * from renamed
