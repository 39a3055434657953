"""The files users run the project with: docker-compose.yml, the Makefile, .ci/run."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml
from django.core.management import get_commands

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = ROOT / ".venv" / "bin"


def _compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def _commands(service: dict) -> list[list[str]]:
    command = service["command"]
    if isinstance(command, list):
        return [command]
    # `sh -c "a && b"`: each part is one command
    inner = shlex.split(command)[2]
    return [shlex.split(part) for part in re.split(r"&&", inner)]


def test_compose_has_the_five_services() -> None:
    compose = _compose()
    default = {name for name, s in compose["services"].items() if not s.get("profiles")}
    assert default == {"db", "redis", "web", "worker", "beat"}
    assert compose["services"]["db"]["image"] == "postgres:16"
    for name in ("web", "worker", "beat"):
        service = compose["services"][name]
        assert service["environment"]["ENVIRONMENT"] == "production"
        assert service["depends_on"]["db"]["condition"] == "service_healthy"


def test_compose_has_a_streaming_replica_profile() -> None:
    """``--profile replica``: a PostgreSQL replica copied from db by pg_basebackup and fed by
    streaming replication (docs/operations.md); db lets the console user replicate."""
    compose = _compose()
    replica = compose["services"]["db-replica"]
    assert replica["profiles"] == ["replica"]
    assert replica["image"] == compose["services"]["db"]["image"]
    script = replica["command"][-1]
    assert "pg_basebackup -h db -U console" in script and " -R " in script
    assert "exec postgres" in script
    assert replica["depends_on"]["db"]["condition"] == "service_healthy"
    hba = compose["services"]["db"]["command"][-1]
    assert "host replication console all scram-sha-256" in hba
    assert "hba_file=/tmp/pg_hba.conf" in hba
    assert "pgreplica" in compose["volumes"]


def test_compose_web_sums_its_workers_metrics_and_is_probed() -> None:
    web = _compose()["services"]["web"]
    directory = web["environment"]["PROMETHEUS_MULTIPROC_DIR"]
    assert web["tmpfs"] == [directory]  # empty at every start
    assert web["environment"]["ENVIRONMENT"] == "production"
    assert "/healthz" in " ".join(web["healthcheck"]["test"])


def test_compose_commands_exist() -> None:
    manage_commands = get_commands()
    compose = _compose()
    seen = set()
    for name in ("web", "worker", "beat"):
        for argv in _commands(compose["services"][name]):
            if argv[:3] == ["python", "-m", "console.ops.serve"]:
                argv = argv[3:]  # the server, with FORWARDED_ALLOW_IPS applied (console/ops)
            program = argv[0]
            seen.add(program)
            if program == "python":
                assert argv[1] == "manage.py"
                assert argv[2] in manage_commands, argv
            else:
                assert (VENV_BIN / program).exists() or program in {"uvicorn", "celery"}, argv
                # the entry points are installed by the project's dependencies
                assert (VENV_BIN / program).exists(), f"{program} is not installed by pyproject"
            if program == "uvicorn":  # the ASGI application (the live stream is async)
                module, _, attr = argv[1].partition(":")
                assert module == "console.asgi"
                assert (ROOT / (module.replace(".", "/") + ".py")).exists()
                assert attr == "application"
            if program == "celery":
                assert argv[1:3] == ["-A", "console"]
                assert argv[3] in {"worker", "beat"}
    assert seen == {"python", "uvicorn", "celery"}


def test_make_run_serves_the_web_process_under_asgi() -> None:
    procfile = (ROOT / "Procfile.dev").read_text()
    web = next(line for line in procfile.splitlines() if line.startswith("web:"))
    assert "uvicorn console.asgi:application" in web


def test_makefile_targets_of_the_readme_exist() -> None:
    makefile = (ROOT / "Makefile").read_text()
    readme = (ROOT / "README.md").read_text()
    assert readme.index("make run") < readme.index("make test")
    for target in ("run", "test"):
        assert re.search(rf"^{target}:", makefile, re.M), target


def test_ci_runs_the_linters_the_type_checker_and_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^make ci\b", ci, re.M)
    assert "pg_isready" in ci and "redis-cli" in ci
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^ci: lint typecheck test$", makefile, re.M)
    lint = re.search(r"^lint:.*\n((?:\t.*\n)+)", makefile, re.M)
    assert lint is not None
    assert "ruff check ." in lint.group(1) and "ruff format --check ." in lint.group(1)
    assert re.search(r"^typecheck:.*\n\t.*mypy \.", makefile, re.M)
    for target in ("test", "test-fast"):
        assert re.search(rf"^{target}:", makefile, re.M), target
    assert '-m "not slow"' in makefile


def test_deploy_checks_are_clean_under_production_settings() -> None:
    import base64
    import os
    import secrets
    import subprocess
    import sys

    env = {
        **os.environ,
        "ENVIRONMENT": "production",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "FIELD_ENCRYPTION_KEYS": base64.urlsafe_b64encode(os.urandom(32)).decode(),
        "ALLOWED_HOSTS": "console.example.com",
        "DEBUG": "false",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def env_variables_read(settings_text: str) -> set[str]:
    """Every environment variable ``console/settings.py`` reads (``env.<type>("NAME", ...)``)."""
    return set(re.findall(r'env(?:\.\w+)?\(\s*"([A-Z][A-Z_0-9]*)"', settings_text))


def env_variables_listed(example_text: str) -> set[str]:
    """Every variable ``.env.example`` sets or shows commented out (``# NAME=...``)."""
    return set(re.findall(r"^#? ?([A-Z][A-Z_0-9]*)=", example_text, re.M))


def test_env_example_lists_every_setting_read_from_the_environment() -> None:
    read = env_variables_read((ROOT / "console" / "settings.py").read_text())
    listed = env_variables_listed((ROOT / ".env.example").read_text())
    assert len(read) > 50
    assert sorted(read - listed) == [], "settings missing from .env.example"
    # prometheus-client reads its directory from the process environment itself.
    others = {"PROMETHEUS_MULTIPROC_DIR"}
    assert sorted(listed - read - others) == [], ".env.example names what nothing reads"
    # The check itself sees a variable left out.
    assert env_variables_read('X = env.int("NEW_SETTING", default=1)') - listed == {"NEW_SETTING"}


@pytest.mark.django_db
def test_every_model_change_has_its_migration() -> None:
    from django.core.management import call_command

    call_command("makemigrations", "--check", "--dry-run", verbosity=0)
