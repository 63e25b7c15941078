"""Model selection for the run-operations and the CLI: names, tags, folders, paths, exclusions."""

from __future__ import annotations

from python_ops.maintenance.config import MaintenanceConfig
from python_ops.maintenance.selection import select_targets
from python_ops.maintenance.targets import ModelTarget


def model(name: str, *folders: str, tags: tuple[str, ...] = ()) -> ModelTarget:
    return ModelTarget(
        name=name,
        location=f"/wh/shop/{name}",
        config=MaintenanceConfig(model=name),
        tags=tags,
        fqn=("shop", *folders, name),
    )


TARGETS = [
    model("landing_orders", "landing", tags=("landing", "hourly")),
    model("landing_customers", "landing", tags=("landing",)),
    model("fct_orders", "marts", "core", tags=("hourly",)),
    model("dim_customers", "marts", "core"),
    model("customer_order_summary", "marts", "reporting"),
]
PATHS = {
    "landing_orders": "models/landing/landing_orders.sql",
    "landing_customers": "models/landing/landing_customers.sql",
    "fct_orders": "models/marts/core/fct_orders.sql",
    "dim_customers": "models/marts/core/dim_customers.sql",
    "customer_order_summary": "models/marts/reporting/customer_order_summary.py",
}


def names(select: object = None, exclude: object = None) -> list[str]:
    chosen = select_targets(TARGETS, select=select, exclude=exclude, paths=PATHS)  # type: ignore[arg-type]
    return [t.name for t in chosen]


ALL = [t.name for t in TARGETS]


def test_nothing_selected_means_every_model_in_order() -> None:
    assert names() == ALL
    assert names([]) == ALL


def test_by_name_one_or_many() -> None:
    assert names("fct_orders") == ["fct_orders"]
    assert names(["dim_customers", "fct_orders"]) == ["fct_orders", "dim_customers"]  # input order
    assert names(["no_such_model"]) == []


def test_by_tag() -> None:
    assert names(["tag:landing"]) == ["landing_orders", "landing_customers"]
    assert names("tag:hourly") == ["landing_orders", "fct_orders"]
    assert names("tag:marts") == []  # a folder is not a tag


def test_by_folder_at_any_depth_but_not_the_model_itself() -> None:
    assert names("marts") == ["fct_orders", "dim_customers", "customer_order_summary"]
    assert names("core") == ["fct_orders", "dim_customers"]
    assert names("shop") == ALL  # the project name is the first fqn part
    assert names("orders") == []  # no partial matches


def test_by_path() -> None:
    assert names("models/marts/core") == ["fct_orders", "dim_customers"]
    assert names("path:models/marts/") == ["fct_orders", "dim_customers", "customer_order_summary"]
    assert names("models/marts/core/fct_orders.sql") == ["fct_orders"]
    assert names("models/mar") == []  # a path prefix must end at a folder boundary


def test_exclusions_win_over_selections() -> None:
    assert names(["marts"], ["dim_customers"]) == ["fct_orders", "customer_order_summary"]
    assert names(None, "tag:landing") == ["fct_orders", "dim_customers", "customer_order_summary"]
    assert names("fct_orders", "tag:hourly") == []
    assert names(["marts"], ["models/marts/reporting"]) == ["fct_orders", "dim_customers"]


def test_path_selectors_without_paths_select_nothing() -> None:
    chosen = select_targets(TARGETS, select=["models/marts"])
    assert chosen == []
