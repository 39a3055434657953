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
