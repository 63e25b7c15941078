"""Per-customer order summary, computed with the DataFrame API on the same Spark session."""

from pyspark.sql import functions as F


def model(dbt, session):
    dbt.config(materialized="table")

    orders = dbt.ref("fct_orders")
    customers = dbt.ref("dim_customers")

    per_customer = orders.groupBy("customer_id").agg(
        F.count("order_id").alias("order_count"),
        F.sum("amount").alias("lifetime_value"),
        F.sum(F.when(F.col("status") == "returned", 1).otherwise(0)).alias("returned_orders"),
        F.max("order_date").alias("last_order_date"),
    )

    return customers.select("customer_id", "customer_name", "region").join(
        per_customer, on="customer_id", how="inner"
    )
