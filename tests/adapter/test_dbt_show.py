from dbt.tests.adapter.dbt_show.test_dbt_show import (
    BaseShowDoesNotHandleDoubleLimit,
    BaseShowLimit,
    BaseShowSqlHeader,
)

from tests.adapter.conftest import adapter_engine


class TestShowLimit(BaseShowLimit):
    pass


class TestShowSqlHeader(BaseShowSqlHeader):
    pass


class TestShowDoesNotHandleDoubleLimit(BaseShowDoesNotHandleDoubleLimit):
    # The suite matches str(ExceptionInfo), which keeps only the head and tail of the message:
    # Sail's tail says "duplicated LIMIT clause"; classic Spark's ends with the statement and
    # its parse-error caret under the second limit.
    DATABASE_ERROR_MESSAGE = "limit 1\\n    --^^^" if adapter_engine() == "local" else "LIMIT"
