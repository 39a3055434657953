"""Every read of the conversation store (selectors, as every room names its reads).

The queries, tuned for their page or endpoint, exported here:

- ``pages.py``: the conversation page (messages, blocks, exchanges, events in a fixed number of
  queries), the replay's decrypted raws, small lookups;
- ``listing.py``: the conversation list (filters, keyset pages, counts, row extras, choices);
- ``search.py``: the one search box (what was pasted, looked up as what it most likely is);
- ``preview.py``: the field-policy preview; ``prices.py``: the price of an exchange's tokens.

The audited selectors, which a page calls once: ``audited.py`` (the list, a conversation, its
tool calls, review grants, the live list) and ``folded.py`` (a long turn's folded calls). Each
checks access, runs the queries and writes its audit row last; they sit above the services and
the sharing room (the layers contract in ``pyproject.toml``), so they are imported from their
modules, never from this package (``from conversations.selectors.audited import
conversation_read``).
"""

from .listing import (
    FLAGS,
    ListFilters,
    RowExtra,
    conversation_count,
    conversation_cursor,
    conversation_cursor_valid,
    conversation_list,
    conversation_row_extras,
    exchange_choices,
    exchange_choices_forget,
)
from .pages import (
    MANY_TOOL_CALLS,
    BranchLink,
    ConversationPage,
    NoSuchExchange,
    OtherBranch,
    PathShown,
    conversation_by_external_id,
    conversation_continuation,
    conversation_format,
    conversation_message_raws,
    conversation_model,
    conversation_owner_by_external_id,
    conversation_page,
    conversation_rows,
    conversation_stored_raws,
    conversation_tree,
    unknown_block_types,
)
from .preview import (
    PreviewBlock,
    PreviewMessage,
    exchange_preview,
    exchanges_for_preview,
    preview_changes,
)

__all__ = [
    "FLAGS",
    "MANY_TOOL_CALLS",
    "BranchLink",
    "ConversationPage",
    "ListFilters",
    "NoSuchExchange",
    "OtherBranch",
    "PathShown",
    "PreviewBlock",
    "PreviewMessage",
    "RowExtra",
    "conversation_by_external_id",
    "conversation_continuation",
    "conversation_count",
    "conversation_cursor",
    "conversation_cursor_valid",
    "conversation_format",
    "conversation_list",
    "conversation_message_raws",
    "conversation_model",
    "conversation_owner_by_external_id",
    "conversation_page",
    "conversation_row_extras",
    "conversation_rows",
    "conversation_stored_raws",
    "conversation_tree",
    "exchange_choices",
    "exchange_choices_forget",
    "exchange_preview",
    "exchanges_for_preview",
    "preview_changes",
    "unknown_block_types",
]
