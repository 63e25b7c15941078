"""Version of the sparkdelta adapter plugin (dbt reads it at registration)."""

version = "0.1.0"
