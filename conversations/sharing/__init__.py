"""What leaves the console, and the app's own words in the trail (DESIGN section 12).

- ``transcript.py``: a conversation as text (Markdown, plain text, JSON), built from the timeline
  the conversation page is built from (``workspace.timeline.build_timeline`` over
  ``selectors.conversation_page``): visible text as the viewer sees it, the trail at
  identifier/status level, the work notes. Never reasoning, signatures or dropped fields: the
  projection never holds them, and the transcript takes nothing from anywhere else.
- ``links.py``: share links (signed tokens, only their SHA-256 stored, an expiry, a boundary
  sequence instead of a copy of the text), created and revoked by audited services.
- ``notes.py``: work notes ("Looked up order {order_id}: {status}"), templated per tool by admins
  over fields every viewer may see; ``annotate`` puts them on a timeline's tool calls, and
  ``work_note`` is the one function the trail, the export, the share page and the live view call.
- ``selectors.py``: the audited selectors (export, opening a share link, the links of a
  conversation and for compliance), each writing its audit row last.
- ``ratelimit.py``: the share page's counter in the shared cache (Redis).

To add an export format: a renderer in ``transcript.py: RENDERERS`` (over ``Transcript``, never
over rows), its name in ``FORMATS``, and a case in ``tests/sharing/test_export.py`` and the crawl.
"""
