"""Whole runs of the jobs, from a loaded config to written outputs: each ``jobs/*.py`` only
parses its arguments and calls one of these."""
