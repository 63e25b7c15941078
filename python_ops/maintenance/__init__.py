"""Maintenance policy and fleet: which op is due for which model, running it, and the record.

``config`` is the one declaration of the per-model settings (typed, validated once);
``registry`` declares each op once (its settings, when it is due, how it runs, what it counts);
``due`` decides from the table's log and the ``history``; ``runner`` runs many models within a
time budget; ``targets`` turns a dbt manifest into models with locations and configs;
``selection`` picks models; ``report`` renders what happened.
"""
