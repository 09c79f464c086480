"""The live prompt as one growing conversation: the first step whole, later steps only the
result and the lines that changed on a long page (the whole page after a navigation, on a
short page, or when most of it changed), a restart when it outgrows its budget, and the
conversation folded back into one full step for fake models and harnesses."""

from webagent.llm.testing import fake_client
from webagent.web.agent_view import Control
from webagent.web.live_action import Choices, predict_live_action, step_message
from webagent.web.live_chat import LiveChat, fold_conversation

LONG = "\n".join(
    ["Corner Grocer", "Cart: 0 items"]
    + [f'[{i}] link "Category {i} of the shop"' for i in range(10, 90)]
    + ['[5] button "Add to cart"']
)
SHORT = 'Order\n[63] text field "Your name" empty required\n[107] submit button "Place order"'


def _turn(chat: LiveChat, context: str, history: list[str], url: str = "http://shop/") -> str:
    return chat.user_turn(
        context=context, task="Add one", history=history, url=url, title="Shop", warning="", question="Next?"
    )


def test_a_long_page_that_changed_one_line_is_sent_as_that_line():
    chat = LiveChat()
    first = _turn(chat, LONG, [])
    assert first.startswith("Previous actions and their results:\nNone\nCurrent page") and "Category 89" in first
    chat.commit(first, {"operation": "CLICK", "element_id": "5"}, "", url="http://shop/", context=LONG)
    after = LONG.replace("Cart: 0 items", "Cart: 1 items")
    second = _turn(chat, after, ["1. CLICK [5] -> ok"])
    assert second.split("\n")[:2] == [
        "Result: 1. CLICK [5] -> ok",
        "The page changed; these lines are new or changed (the rest is as above):",
    ]
    assert "Cart: 1 items" in second and "Category" not in second and len(second.split()) < 40
    assert "Gone from the page: Cart: 0 items" in second
    folded = fold_conversation([first, second])
    assert "Cart: 1 items" in folded and "Cart: 0 items" not in folded and 'Category 89 of the shop"' in folded
    assert folded.startswith("Previous actions and their results:\n1. CLICK [5] -> ok\nCurrent page (URL: http://shop/")


def test_the_fold_keeps_the_last_turns_warning_where_the_full_message_has_it():
    chat = LiveChat()
    first = _turn(chat, LONG, [])
    chat.commit(first, None, "", url="http://shop/", context=LONG)
    warn = "Warning: you already did CLICK [5] on this same page, and it did not help. Do something else."
    for page in (LONG, LONG.replace("0 items", "1 items")):  # the same page, and one line changed
        second = chat.user_turn(
            context=page,
            task="Add one",
            history=["1. CLICK [5] -> ok"],
            url="http://shop/",
            title="Shop",
            warning=warn,
            question="Next?",
        )
        folded = fold_conversation([first, second])
        assert folded.endswith(f"'''\n{warn}\nTask: Add one\nNext?"), folded[-300:]
    assert "Warning" not in fold_conversation([first])


def test_a_short_page_a_new_url_and_a_big_change_are_sent_whole():
    chat = LiveChat()
    first = _turn(chat, SHORT, [])
    chat.commit(first, {"operation": "TYPE", "element_id": "63", "value": "Ada"}, "", url="http://shop/", context=SHORT)
    second = _turn(chat, SHORT.replace("empty", 'value="Ada"'), ["1. TYPE -> ok"])
    assert "The page now (URL: http://shop/" in second and "[107] submit button" in second  # the form stays in view
    chat.commit(second, None, "", url="http://shop/", context=SHORT)
    third = _turn(chat, "Thank you", ["1. TYPE -> ok", "2. CLICK -> ok"], url="http://shop/done")
    assert "Current page (URL: http://shop/done" in third


def test_the_conversation_restarts_beyond_its_budget():
    chat = LiveChat(budget_words=150)
    first = _turn(chat, LONG, [])
    chat.commit(first, None, "", url="http://shop/", context=LONG)
    again = _turn(chat, LONG.replace("0 items", "1 items"), ["1. CLICK [5] -> ok"])
    assert again.startswith("Previous actions and their results:\n1. CLICK [5] -> ok") and chat.restarts == 1


async def test_each_step_appends_to_the_previous_prompt():
    """Everything before a step's new turn is the previous prompt unchanged (what the server's
    prompt cache keeps); a fake model reads the folded full step."""
    client = fake_client([{"action": {"operation": "CLICK", "element_id": "5"}}] * 2)
    chat = LiveChat()
    choices = Choices({"5": Control("5", "CLICK", "button", "Add to cart")})
    await predict_live_action(
        client, context=LONG, task="Add one", history=[], choices=choices, url="http://shop/", title="Shop", chat=chat
    )
    await predict_live_action(
        client,
        context=LONG.replace("0 items", "1 items"),
        task="Add one",
        history=["1. CLICK [5] -> ok"],
        choices=choices,
        url="http://shop/",
        title="Shop",
        chat=chat,
    )
    one, two = (r["messages"] for r in client.backend.requests)
    assert two[: len(one)] == one
    assert two[len(one)] == {"role": "assistant", "content": '{"action": {"operation": "CLICK", "element_id": "5"}}'}
    assert "Cart: 1 items" in step_message(two) and "Category 10 of the shop" in step_message(two)
