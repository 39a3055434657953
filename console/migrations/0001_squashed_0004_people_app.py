"""The console app's own table, a person's preferences (squashed). The people models, which the
console app held before its four earlier migrations moved them out, are the people app's
(console/people/migrations/).

A database migrated through the four earlier migrations has this one as applied.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    replaces = [
        ("console", "0001_user_preference"),
        ("console", "0002_people"),
        ("console", "0003_username_key"),
        ("console", "0004_people_app"),
    ]

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="UserPreference",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "time_zone",
                    models.CharField(
                        blank=True,
                        help_text="an IANA zone (Europe/Paris); empty: the browser's",
                        max_length=64,
                    ),
                ),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "user",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="console_preference",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
        ),
    ]
