"""Helpers shared by the test tiers (imported by tests and conftests, never collected)."""
