"""dbt adapter plugin: dbt-spark plus an embedded Sail engine and the python_ops bridge."""
