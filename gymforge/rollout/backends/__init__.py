"""Scale-out backends for the runner. Each lives in its own module so that its optional
dependency (``redis``) is imported only when that backend is used."""
