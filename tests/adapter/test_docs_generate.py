import pytest
from dbt.tests.adapter.catalog import files
from dbt.tests.adapter.catalog.relation_types import CatalogRelationTypes


class TestCatalogRelationTypes(CatalogRelationTypes):
    """``dbt docs generate``: every node in the catalog, with Spark's relation type names.

    Spark has no materialized views, so the suite's materialized-view model is left out.
    """

    @pytest.fixture(scope="class", autouse=True)
    def models(self):
        return {"my_table.sql": files.MY_TABLE, "my_view.sql": files.MY_VIEW}

    @pytest.mark.parametrize(
        ("node_name", "relation_type"),
        [
            ("seed.test.my_seed", "table"),
            ("model.test.my_table", "table"),
            ("model.test.my_view", "view"),
        ],
    )
    def test_relation_types_populate_correctly(self, docs, node_name, relation_type):
        super().test_relation_types_populate_correctly(docs, node_name, relation_type)
