"""The demo shop's own word: an order counts when its order form sent it in this run (the
request for confirm.html comes with the order page as Referer), never a confirmation URL
opened straight; each demo task names a book of the catalogue and the order it asks for."""

import re
import urllib.request

from webagent.demo_site import DEMO_TASK, DEMO_TASKS, SITE_DIR, DemoShop

ORDER = "confirm.html?item=b6&name=Ada+Lovelace&shipping=express"


def _get(url: str, referer: str | None = None) -> None:
    request = urllib.request.Request(url, headers={"Referer": referer} if referer else {})
    with urllib.request.urlopen(request, timeout=5) as reply:
        assert reply.status == 200


def test_only_an_order_sent_by_the_form_counts():
    shop = DemoShop.start()
    try:
        _get(shop.base + ORDER)  # typed or GOTO: no Referer
        _get(shop.base + ORDER, referer=shop.base + "index.html")  # not from the order form
        assert shop.orders == [] and shop.confirms(DEMO_TASK) is False
        assert shop.describe() == "the shop recorded no order"
        _get(shop.base + ORDER.replace("express", "standard"), referer=shop.base + "order.html?item=b6")
        assert shop.confirms(DEMO_TASK) is False  # the wrong shipping
        _get(shop.base + ORDER + "&gift=yes", referer=shop.base + "order.html?item=b6")
        assert shop.confirms(DEMO_TASK) is False  # gift wrap the task did not ask for
        assert "book b6 for ada lovelace, express, gift-wrapped" in shop.describe()
        _get(shop.base + ORDER, referer=shop.base + "order.html?item=b6")
        assert shop.confirms(DEMO_TASK) is True
        assert shop.confirms("Buy something nice.") is None  # a task the shop does not know
    finally:
        shop.stop()


def test_every_demo_task_names_a_book_of_the_catalogue():
    catalogue = dict(re.findall(r'id: "(b\d)", title: "([^"]+)"', (SITE_DIR / "books.js").read_text()))
    assert len(DEMO_TASKS) == 6 and DEMO_TASK in DEMO_TASKS
    assert {o["item"] for o in DEMO_TASKS.values()} == set(catalogue)  # six different books
    assert {o["shipping"] for o in DEMO_TASKS.values()} == {"standard", "express", "pickup"}
    for task, order in DEMO_TASKS.items():
        assert catalogue[order["item"]] in task, task
        assert order["name"] in task.lower(), task
