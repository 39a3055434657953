from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = "Support console"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        from .hardening import mark_renewed
        from .preferences import prime_on_login

        # The user's time zone goes into the session at login (console/preferences.py).
        user_logged_in.connect(prime_on_login, dispatch_uid="console.prime_time_zone")
        # The sliding session's last renewal is the login (console/hardening.py).
        user_logged_in.connect(mark_renewed, dispatch_uid="console.session_renewed")
