from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = "Support console"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        from .preferences import prime_on_login

        # The user's time zone goes into the session at login (console/preferences.py).
        user_logged_in.connect(prime_on_login, dispatch_uid="console.prime_time_zone")
