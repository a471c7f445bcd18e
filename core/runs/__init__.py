"""The run engine shared by every long job: :mod:`core.runs.models` (the abstract ``Run``, its
status vocabulary) and :mod:`core.runs.engine` (launch, chunk, lease, resume, cancel)."""
