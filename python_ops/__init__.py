"""Delta table maintenance ops: plain Python, no dbt imports."""
