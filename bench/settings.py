"""Settings of the API benchmark's server: the project's, plus the baseline endpoint's URLs."""

from console.settings import *  # noqa: F403

ROOT_URLCONF = "bench.urls"
