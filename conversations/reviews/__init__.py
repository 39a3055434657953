"""The reasoning review: grants, the live-grant check, and the read (DESIGN sections 1 and 2).

A review is the one human read of deliberation (invariant 1). It is defensible only as a
read-time view for one person, for one conversation, for a stated purpose, never persisted:

- **Grants.** ``review_grant_create`` gives one reviewer (a member of the ``reviewer`` group) the
  review of one conversation until a date, for a purpose category and a ticket reference;
  ``review_grant_revoke`` ends it. Each writes its audit row (``grant.created`` /
  ``grant.revoked``) in its transaction. A grant is a ``ReviewGrant`` row and the guardian object
  permission ``conversations.review_reasoning`` on the conversation. Guardian has no expiry, so
  ``review_grant_live`` requires both: an active reviewer, the permission, and a grant neither
  revoked nor expired. A superuser gets no bypass: the grant row is always required.
- **The read.** ``review_read`` decrypts the conversation's messages, reads their reasoning
  (``reasoning.py``), fetches a missing OpenAI summary from the provider when a key is configured
  (``provider.py``), redacts every text (``redaction.redact``, the one pipeline), and writes the
  ``review.read`` audit row (who, conversation, exchanges, purpose, reference, grant, a keyed hash
  of what is shown; never the content) in the same transaction. If the row cannot be written the
  transaction fails and the caller shows nothing. The content is returned to the caller, in
  memory only: no cache, session, log line, task or table receives it.
- **Limits.** At most ``REVIEW_RATE_LIMIT`` reviews per user per hour, counted from the audit log
  (PostgreSQL is the state: no counter in Redis to lose or to skip). More than
  ``REVIEW_ALERT_THRESHOLD`` distinct conversations reviewed by one user in 24 hours writes a
  ``ReviewAlert`` row for compliance, in the transaction of the review that crossed the line.
  A per-user advisory lock makes the count and the new row one step, so two tabs cannot both
  slip under the limit.

Layout: ``grants.py`` (grants, the live check, the oversight lists), ``selectors.py`` (the read, its
limits and alerts), ``reasoning.py`` (the one way to the reasoning of a stored message),
``provider.py`` (the HTTP client of the provider's retrieve endpoint). Import from the package:
``from conversations.reviews import review_read``.

The permission lives on the Conversation content type (guardian checks a permission against the
object's own content type), declared in Conversation's Meta; ``review_permission()`` recreates
it where a database was flushed without migrating.
"""

from .grants import (
    MAX_GRANT_DAYS,
    REVIEW_PERMISSION,
    REVIEWER_GROUP,
    GrantRefused,
    ReviewError,
    review_alerts_recent,
    review_grant_check,
    review_grant_create,
    review_grant_live,
    review_grant_revoke,
    review_grants_live,
    review_grants_recent,
    review_permission,
)
from .selectors import (
    MAX_FETCHES,
    Review,
    ReviewNotAllowed,
    ReviewRateLimited,
    ShownExchange,
    ShownTrace,
    content_hash,
    review_read,
)

__all__ = [
    "MAX_FETCHES",
    "MAX_GRANT_DAYS",
    "REVIEWER_GROUP",
    "REVIEW_PERMISSION",
    "GrantRefused",
    "Review",
    "ReviewError",
    "ReviewNotAllowed",
    "ReviewRateLimited",
    "ShownExchange",
    "ShownTrace",
    "content_hash",
    "review_alerts_recent",
    "review_grant_check",
    "review_grant_create",
    "review_grant_live",
    "review_grant_revoke",
    "review_grants_live",
    "review_grants_recent",
    "review_permission",
    "review_read",
]
