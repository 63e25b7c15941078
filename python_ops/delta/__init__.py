"""The Delta table format: what a table is, read from its log, and how commits are written.

``snapshot`` reads ``_delta_log`` (JSON commits and Parquet checkpoints) into the current
state, checking every action strictly (``actions``); ``log_files`` names and classifies the
log's files; ``protocol`` decides which table features each op supports; ``properties`` holds
every table property this project reads, its default, and the retention resolvers; ``stats``
reads per-file statistics; ``partition_scope`` and ``partitions`` evaluate partition
conditions; ``writer`` opens a table in delta-rs and commits through it. Nothing here lists or
deletes data files: that is the ops' work.
"""
