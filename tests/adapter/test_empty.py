from dbt.tests.adapter.empty.test_empty import BaseTestEmpty, BaseTestEmptyInlineSourceRef


class TestEmpty(BaseTestEmpty):
    pass


class TestEmptyInlineSourceRef(BaseTestEmptyInlineSourceRef):
    pass
