FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml ./
COPY console ./console
COPY conversations ./conversations
COPY audit ./audit
COPY retention ./retention
RUN pip install --no-cache-dir .
COPY . .
RUN useradd --system --uid 1001 console && mkdir -p /app/var && chown console /app/var
USER console
# The web server, forwarded headers trusted only from FORWARDED_ALLOW_IPS (default: none), the
# same under uvicorn and gunicorn (console/ops/serve.py); docker-compose.yml runs migrations first.
ENV FORWARDED_ALLOW_IPS=""
EXPOSE 8000
CMD ["python", "-m", "console.ops.serve", "uvicorn", "console.asgi:application", "--host", "0.0.0.0", "--port", "8000"]
