"""Storage classes: what of a tool's input and result is kept and shown (DESIGN section 4)."""

from __future__ import annotations

import pytest

from conversations.blocks import Block, BlockClass
from conversations.projection.classes import DISPLAY, DROP, IDENTIFIER, RESTRICTED, STATUS
from conversations.projection.project import (
    Policies,
    Rule,
    project_block,
    source_link,
    view_fields,
)

RESULT = {
    "order_id": "ORD-1234567",
    "status": "shipped",
    "customer": {"email": "ana.silva@example.com", "name": "Ana Silva", "id": "cus_9"},
    "items": [{"sku": "SKU-1", "price": 12.5}, {"sku": "SKU-2", "price": 3}],
    "card": "4111 1111 1111 1111",
    "alice@example.com": {"note": "keyed by an address"},
}


def call(output: object = None, input: object = None, tool: str | None = "get_order") -> Block:
    return Block(
        type="tool_result" if output is not None else "tool_use",
        cls=BlockClass.AUDIT,
        tool_name=tool if output is None else None,
        call_id="toolu_1",
        input=input,
        output=output,
    )


def kept(row: dict) -> dict[str, tuple[str, object]]:
    return {
        f"{e['side']}:{e['path']}": (e["class"], e["value"]) for e in row["fields"].get("kept", [])
    }


def test_defaults_fail_closed() -> None:
    row = project_block(call(output=RESULT), tool="get_order")
    assert kept(row) == {
        "output:$.order_id": (IDENTIFIER, "ORD-1234567"),
        "output:$.status": (STATUS, "shipped"),
        "output:$.customer.id": (IDENTIFIER, "cus_9"),
    }
    dropped = row["fields"]["dropped"]
    assert "output:$.customer.email" in dropped
    assert "output:$.card" in dropped
    assert "output:$.items[*].sku" in dropped
    # A key that is not a schema name never reaches a path.
    assert not any("alice" in d for d in dropped)
    assert "output:$.*.note" in dropped
    assert "ana.silva" not in str(row) and "4111" not in str(row)


def test_tool_result_sent_as_json_text_is_read_as_fields() -> None:
    import json

    as_text = project_block(call(output=json.dumps(RESULT)), tool="get_order")
    as_block = project_block(
        call(output=[{"type": "text", "text": json.dumps(RESULT)}]), tool="get_order"
    )
    assert (
        kept(as_text)
        == kept(as_block)
        == kept(project_block(call(output=RESULT), tool="get_order"))
    )


def test_plain_text_result_is_dropped_whole() -> None:
    row = project_block(call(output="Ana Silva lives at 12 rue de la Paix"), tool="lookup")
    assert row["fields"] == {"dropped": ["output:$"]}


def test_policies_keep_display_and_restricted_redacted() -> None:
    policies = Policies(
        [
            Rule("get_order", "*", "output", "$.customer.email", DISPLAY),
            Rule("get_order", "*", "output", "$.card", RESTRICTED),
            Rule("*", "*", "output", "$.items[*].sku", IDENTIFIER),
            Rule("*", "*", "output", "$.order_id", DROP),
        ]
    )
    row = project_block(call(output=RESULT), policies, tool="get_order")
    fields = kept(row)
    assert fields["output:$.customer.email"] == (DISPLAY, "[email]")
    assert fields["output:$.card"] == (RESTRICTED, "[card ••1111]")
    skus = [e["value"] for e in row["fields"]["kept"] if e["path"] == "$.items[*].sku"]
    assert skus == ["SKU-1", "SKU-2"] and fields["output:$.items[*].sku"][0] == IDENTIFIER
    assert "output:$.order_id" not in fields  # an explicit drop beats the identifier default
    assert "output:$.order_id" in row["fields"]["dropped"]


def test_a_policy_on_an_object_applies_below_it() -> None:
    policies = Policies([Rule("*", "*", "output", "$.customer", DISPLAY)])
    fields = kept(project_block(call(output=RESULT), policies, tool="get_order"))
    assert fields["output:$.customer.name"] == (DISPLAY, "Ana Silva")
    assert fields["output:$.customer.email"] == (DISPLAY, "[email]")


@pytest.mark.parametrize(
    ("rules", "expected"),
    [
        (
            [
                Rule("*", "*", "output", "$.card", DISPLAY),
                Rule("get_order", "*", "output", "$.card", DROP),
            ],
            None,
        ),
        (
            [
                Rule("get_order", "*", "output", "$.card", DROP),
                Rule("*", "*", "output", "$.card", DISPLAY),
            ],
            None,
        ),
        ([Rule("other_tool", "*", "output", "$.card", DISPLAY)], None),
        (
            [
                Rule("*", "tool_result", "output", "$.card", DISPLAY),
                Rule("*", "*", "output", "$.card", DROP),
            ],
            DISPLAY,
        ),
        ([Rule("*", "*", "input", "$.card", DISPLAY)], None),
    ],
    ids=["named-tool-wins", "order-does-not-matter", "other-tool", "named-type-wins", "other-side"],
)
def test_the_most_specific_rule_wins(rules: list[Rule], expected: str | None) -> None:
    fields = kept(project_block(call(output=RESULT), Policies(rules), tool="get_order"))
    assert fields.get("output:$.card", (None,))[0] == expected


def test_visible_text_is_redacted() -> None:
    row = project_block(Block("text", BlockClass.VISIBLE, text="Mail me at bo@example.com"))
    assert row["text"] == "Mail me at [email]"


@pytest.mark.parametrize("cls", [BlockClass.NEVER, BlockClass.UNKNOWN])
def test_deliberation_projects_to_its_type_only(cls: BlockClass) -> None:
    row = project_block(Block("thinking", cls, redacted=True))
    assert row == {"provider_type": "thinking", "block_class": cls.value, "redacted": True}


def test_restricted_is_shown_only_with_the_permission() -> None:
    policies = Policies([Rule("*", "*", "output", "$.card", RESTRICTED)])
    row = project_block(call(output=RESULT), policies, tool="get_order")
    shown, hidden = view_fields(row["fields"], tool_name="get_order", can_see_restricted=False)
    assert "$.card" not in [f.path for f in shown]
    assert "output:$.card" in hidden
    shown, hidden = view_fields(row["fields"], tool_name="get_order", can_see_restricted=True)
    assert [f.value for f in shown if f.path == "$.card"] == ["[card ••1111]"]


def test_identifiers_link_to_the_source_system() -> None:
    row = project_block(call(output=RESULT), tool="get_order")
    shown, _ = view_fields(
        row["fields"],
        tool_name="get_order",
        can_see_restricted=False,
        links={"get_order": "https://orders.example.com/orders/{order_id}"},
    )
    urls = {f.path: f.url for f in shown}
    assert urls["$.order_id"] == "https://orders.example.com/orders/ORD-1234567"
    assert urls["$.status"] is None  # a status is not an identifier
    assert urls["$.customer.id"] is None  # the template names order_id only


def test_source_link_quotes_the_value() -> None:
    assert (
        source_link("https://x.example/o/{order_id}", "$.order_id", "a/b c")
        == "https://x.example/o/a%2Fb%20c"
    )
    assert source_link("https://x.example/o/{order_id}", "$.id", "1") is None


def test_hostile_depth_is_bounded() -> None:
    deep: dict = {"id": "x"}
    for _ in range(50):
        deep = {"nested": deep}
    row = project_block(call(output=deep), tool="t")
    assert "output:$" + ".nested" * 12 in row["fields"]["dropped"]


def test_the_model_choices_are_the_storage_classes() -> None:
    # One definition: the admin's choices are the classes the projection keeps and shows by.
    from conversations.models import FieldPolicy
    from conversations.projection.classes import LABELS, StorageClass

    assert FieldPolicy.StorageClass.choices == [(c.value, LABELS[c]) for c in StorageClass]
    assert FieldPolicy._meta.get_field("storage_class").choices == FieldPolicy.StorageClass.choices
