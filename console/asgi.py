"""The web process: Django under an ASGI server (uvicorn), so the live stream
(``/conversations/<pk>/live``, an async view) holds no worker thread per viewer while every other
page runs as before (sync views in Django's thread pool). ``make run`` and docker-compose serve
this; ``console/wsgi.py`` stays for a WSGI server (every page but the live stream works there)."""

import os

from django.conf import settings
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
# Under ASGI each request's sync code runs in a thread of its own: a persistent connection per
# thread would pile up until PostgreSQL refuses clients. The web process takes its connections
# from a pool (psycopg_pool; console/settings.py: DATABASE_POOL, DATABASE_POOL_SIZE), set here
# before any connection is made (the settings are loaded already: console/__init__.py loads
# Celery's app). DATABASE_POOL=false closes them at each request's end instead.
if os.environ.get("DATABASE_POOL", "true").lower() not in ("false", "0", "no"):
    for _alias, _db in settings.DATABASES.items():
        _db["CONN_MAX_AGE"] = 0
        _db.pop("CONN_HEALTH_CHECKS", None)
        _db.setdefault("OPTIONS", {})["pool"] = {
            "min_size": 1,
            "max_size": settings.DATABASE_POOL_SIZE,
            # A read replica that is down costs a page two seconds, not the pool's 30, before
            # the page is read on the primary (conversations/replicas.py).
            **({"timeout": 2} if _alias in settings.DATABASE_REPLICAS else {}),
        }
else:
    for _db in settings.DATABASES.values():
        _db["CONN_MAX_AGE"] = 0
application = get_asgi_application()
if settings.DEBUG:
    # runserver served static files in development; under uvicorn this does.
    application = ASGIStaticFilesHandler(application)
