from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = "Support console"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in, user_logged_out

        from .hardening import mark_renewed
        from .people.sessions import session_signed_in, session_signed_out
        from .preferences import prime_on_login

        # The user's time zone goes into the session at login (console/preferences.py).
        user_logged_in.connect(prime_on_login, dispatch_uid="console.prime_time_zone")
        # The sliding session's last renewal is the login (console/hardening.py).
        user_logged_in.connect(mark_renewed, dispatch_uid="console.session_renewed")
        # Each session a person signs in with is kept by name, so that a deactivation ends them
        # all at once (console/people/sessions.py).
        user_logged_in.connect(session_signed_in, dispatch_uid="console.people.session_in")
        user_logged_out.connect(session_signed_out, dispatch_uid="console.people.session_out")
        # `manage.py check` (run by migrate) checks the People block of settings
        # (console/people/checks.py) and refuses a database stopped partway through the
        # migrations a squashed one replaces (console/ops/checks.py).
        # Share tokens never reach a log: the servers' access lines and Django's request
        # records have the token of a share link's path masked (console/ops/logs.py).
        from .ops import checks as ops_checks  # noqa: F401
        from .ops.logs import install_share_token_filter
        from .people import checks  # noqa: F401

        install_share_token_filter()
