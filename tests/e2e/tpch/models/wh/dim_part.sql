select * from {{ ref('base_part') }}
