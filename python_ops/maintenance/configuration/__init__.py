"""What a model asks for: its maintenance config, validated once, and its profile.

The model's ``maintenance_*`` config, validated once into one typed object (``config``), the op keys
and retention policy it implies, and the dbt profile's engine settings.

May import: no other room (``tests/unit/test_layers.py`` holds the order).
"""
