from dbt.tests.adapter.dbt_show.test_dbt_show import (
    BaseShowDoesNotHandleDoubleLimit,
    BaseShowLimit,
    BaseShowSqlHeader,
)


class TestShowLimit(BaseShowLimit):
    pass


class TestShowSqlHeader(BaseShowSqlHeader):
    pass


class TestShowDoesNotHandleDoubleLimit(BaseShowDoesNotHandleDoubleLimit):
    # Sail words it "duplicated LIMIT clause"; the suite matches case-sensitively.
    DATABASE_ERROR_MESSAGE = "LIMIT"
