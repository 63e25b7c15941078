import pytest
from dbt.tests.adapter.simple_seed.test_seed import BaseTestEmptySeed
from dbt.tests.util import run_dbt

from tests.adapter.fixtures_seed_column_types import (
    MACRO_TEST_IS_TYPE_SQL,
    SEED_CSV,
    SEED_YML,
)


class TestEmptySeed(BaseTestEmptySeed):
    pass


class TestSeedColumnTypesCast:
    @pytest.fixture(scope="class")
    def macros(self):
        return {"test_is_type.sql": MACRO_TEST_IS_TYPE_SQL}

    @pytest.fixture(scope="class")
    def seeds(self):
        return {"payments.csv": SEED_CSV, "schema.yml": SEED_YML}

    # Hive would load every field as a string; column_types must change them.
    def test_column_seed_type(self, project):
        results = run_dbt(["seed"])
        assert len(results) == 1
        run_dbt(["test"], expect_pass=False)
