"""The agent's workspace: what the console's conversation pages are made of, beyond the rows.

- ``status.py``: where a conversation stands (open, escalated, resolved, abandoned), folded from
  its events; ``conversation_record_event`` keeps ``Conversation.status`` up to date with it.
- ``timeline.py``: a conversation page as a person reads it: turns with their times, each tool
  call joined with its result, the exchange that produced a turn beside it, events in sentences.
- ``words.py``: provider strings (finish reasons, tool states, server tools) in plain words.

Pure functions over rows the selectors fetched: nothing here queries the database (the search
box's lookup is ``selectors/search.py``), so a page's query count stays what its audited selector
pins.
"""
