"""The dedup run in one process, for inputs one machine holds: the core (``near``), and for
the ``local`` engine the JSON-lines reader (``read``) and the outputs (``outputs``) without
Spark."""
