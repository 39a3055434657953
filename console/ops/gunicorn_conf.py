"""gunicorn's settings for the console (``gunicorn --config python:console.ops.gunicorn_conf``,
as ``python -m console.ops.serve gunicorn`` passes it): forwarded headers (``X-Forwarded-For``,
``X-Forwarded-Proto``) trusted only from ``FORWARDED_ALLOW_IPS`` (default: none, where gunicorn
would trust 127.0.0.1 and ::1), as under uvicorn (``serve.py``)."""

from __future__ import annotations

from console.ops.serve import forwarded_allow_ips as _trusted

forwarded_allow_ips = ",".join(_trusted())
