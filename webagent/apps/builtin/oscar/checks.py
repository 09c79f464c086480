"""The tasks' checks: each reads the shop's database through Django's ORM (never page text) and returns
(ok, why). Imported by app.py's check after Django is set up under STATE."""

import re
from decimal import Decimal, InvalidOperation

import seed_data as S

SEEDED_ORDERS = {"100001", "100002", "100003", "100004", "100005", "100006"}  # 100000 + seed basket id
SEEDED_STATUS = {
    "100001": "Shipped",
    "100002": "Being processed",
    "100003": "Complete",
    "100004": "Pending",
    "100005": "Pending",
    "100006": "Cancelled",
}


def _models():
    from django.contrib.auth import get_user_model
    from oscar.core.loading import get_model

    class M:
        User = get_user_model()
        Product = get_model("catalogue", "Product")
        StockRecord = get_model("partner", "StockRecord")
        Basket = get_model("basket", "Basket")
        Line = get_model("basket", "Line")
        Order = get_model("order", "Order")
        UserAddress = get_model("address", "UserAddress")
        ProductRecord = get_model("analytics", "ProductRecord")

    return M


def _product(title):
    return _models().Product.objects.get(title=title)


def _new_orders():
    return list(_models().Order.objects.exclude(number__in=SEEDED_ORDERS))


def _seeded_statuses_except(*numbers):
    M = _models()
    for o in M.Order.objects.filter(number__in=SEEDED_ORDERS):
        if o.number not in numbers and o.status != SEEDED_STATUS[o.number]:
            return f"order {o.number} changed status to {o.status!r}"
    return ""


def _no_orders_placed():
    new = _new_orders()
    return f"{len(new)} new order(s) were placed" if new else ""


def _basket_lines(owner):
    """(title, quantity) of the open baskets' lines of ``owner`` (None: anonymous baskets)."""
    M = _models()
    baskets = (
        M.Basket.objects.filter(status="Open", owner=owner)
        if owner is not None
        else M.Basket.objects.filter(status="Open", owner__isnull=True)
    )
    return sorted((line.product.title, line.quantity) for b in baskets for line in b.all_lines())


def _user(username):
    return _models().User.objects.get(username=username)


def _seeded_user(username):
    return next(u for u in S.USERS if u[0] == username)


def _user_untouched(username, *fields):
    u = _user(username)
    _, email, _, first, last, _ = _seeded_user(username)
    want = {"email": email, "first_name": first, "last_name": last}
    for field in fields or want:
        if getattr(u, field) != want[field]:
            return f"{username}'s {field} changed to {getattr(u, field)!r}"
    return ""


def _numbers(answer):
    return re.findall(r"\d+(?:\.\d+)?", (answer or "").replace(",", ""))


def _answer_is_amount(answer, value):
    nums = _numbers(answer)
    try:
        return len(nums) == 1 and Decimal(nums[0]) == Decimal(value)
    except InvalidOperation:
        return False


def _first(*whys):
    return next((w for w in whys if w), "")


# ---------------------------------------------------------------- the checks


def login_alice(answer):
    u = _user("alice")
    if u.last_login is None:
        return False, "alice has never logged in"
    why = _first(_user_untouched("alice"), _no_orders_placed(), "alice's basket changed" if _basket_lines(u) else "")
    return (not why), why or "alice logged in"


def search_open(answer):
    M = _models()
    p = _product("Raspberry Pi 5 Starter Kit (8 GB)")
    rec = M.ProductRecord.objects.filter(product=p).first()
    if not rec or rec.num_views < 1:
        return False, "the Raspberry Pi 5 Starter Kit page was not opened"
    why = _first(
        _no_orders_placed(),
        "something was put in a basket"
        if M.Line.objects.filter(basket__status="Open").exclude(basket__owner__username="carol").exists()
        else "",
    )
    return (not why), why or "the product page was opened"


def _guest_basket_is(title):
    lines = _basket_lines(None)
    if lines != [(title, 1)]:
        return False, f"anonymous basket lines are {lines}, expected one {title!r}"
    M = _models()
    if (
        M.Line.objects.filter(basket__status="Open", basket__owner__isnull=False)
        .exclude(basket__owner__username="carol")
        .exists()
    ):
        return False, "a customer's basket changed"
    why = _no_orders_placed()
    return (not why), why or f"the basket holds one {title}"


def add_basket_guest(answer):
    return _guest_basket_is("Designing Data-Intensive Applications")


def category_add_basket(answer):
    return _guest_basket_is("The Food Lab")


def login_add_basket(answer):
    bob = _user("bob")
    lines = _basket_lines(bob)
    want = [("JBL Flip 6 Bluetooth Speaker", 1)]
    if lines != want:
        return False, f"bob's basket lines are {lines}, expected {want}"
    why = _first(_no_orders_placed(), _user_untouched("bob"))
    return (not why), why or "bob's basket holds one JBL Flip 6"


def guest_checkout(answer):
    new = _new_orders()
    if len(new) != 1:
        return False, f"{len(new)} new orders, expected exactly 1"
    o = new[0]
    a = o.shipping_address
    lines = sorted((line.title, line.quantity) for line in o.lines.all())
    problems = []
    if o.user_id is not None or (o.guest_email or "").lower() != "jane.doe@example.org":
        problems.append(f"not a guest order for jane.doe@example.org (user {o.user_id}, email {o.guest_email!r})")
    if lines != [("Kindle Paperwhite (16 GB)", 1)]:
        problems.append(f"lines {lines}")
    if o.shipping_code != "express":
        problems.append(f"shipping {o.shipping_code!r}")
    if a is None:
        problems.append("no shipping address")
    else:
        got = (
            a.first_name.strip(),
            a.last_name.strip(),
            a.line1.strip(),
            a.line4.strip(),
            a.postcode.strip().upper(),
            a.country_id,
        )
        want = ("Jane", "Doe", "12 High Street", "Cambridge", "CB2 1TN", "GB")
        if got != want:
            problems.append(f"address {got}, expected {want}")
    why = _first("; ".join(problems), _seeded_statuses_except())
    return (not why), why or f"order {o.number} placed as asked"


def carol_voucher(answer):
    carol = _user("carol")
    M = _models()
    baskets = list(M.Basket.objects.filter(owner=carol, status="Open"))
    codes = sorted(v.code for b in baskets for v in b.vouchers.all())
    if codes != [S.VOUCHER_CODE]:
        return False, f"carol's basket vouchers are {codes}"
    lines = _basket_lines(carol)
    if lines != [("Clean Code", 1)]:
        return False, f"carol's basket lines changed to {lines}"
    why = _no_orders_placed()
    return (not why), why or "SAVE10 applied to carol's basket"


def answer_price(answer):
    p = _product("Designing Data-Intensive Applications")
    price = p.stockrecords.get().price
    if _answer_is_amount(answer, price):
        return True, f"answered {answer!r}, the price is {price}"
    return False, f"answered {answer!r}, the price is {price}"


def answer_stock(answer):
    sr = _product("Bose QuietComfort Earbuds II").stockrecords.get()
    available = sr.num_in_stock - (sr.num_allocated or 0)
    if _answer_is_amount(answer, available):
        return True, f"answered {answer!r}, {available} in stock"
    return False, f"answered {answer!r}, {available} in stock"


def answer_order_status(answer):
    o = _models().Order.objects.get(number="100003")
    if (answer or "").strip().strip(".").lower() == o.status.lower():
        return True, f"answered {answer!r}, the status is {o.status}"
    return False, f"answered {answer!r}, the status is {o.status}"


def edit_profile(answer):
    dave = _user("dave")
    if dave.last_name != "Miller-Jones":
        return False, f"dave's last name is {dave.last_name!r}"
    why = _user_untouched("dave", "first_name", "email")
    return (not why), why or "dave's last name is Miller-Jones"


def edit_address(answer):
    addrs = list(_models().UserAddress.objects.filter(user__username="bob"))
    if len(addrs) != 1:
        return False, f"bob has {len(addrs)} addresses, expected his 1"
    a = addrs[0]
    if a.line1.strip() != "Flat 4, 22 Queen Street":
        return False, f"first line is {a.line1!r}"
    want = dict(S.BOB_ADDRESS, line1="Flat 4, 22 Queen Street")
    for field, value in want.items():
        if (getattr(a, field) or "") != value:
            return False, f"{field} changed to {getattr(a, field)!r}"
    if a.country_id != "GB" or not a.is_default_for_shipping or not a.is_default_for_billing:
        return False, "country or default flags changed"
    return True, "bob's address has the new first line"


def staff_unpublish(answer):
    M = _models()
    kobo = _product("Kobo Clara 2E")
    if kobo.is_public:
        return False, "Kobo Clara 2E is still public"
    row = next(r for r in S.PRODUCTS if r[2] == "Kobo Clara 2E")
    sr = kobo.stockrecords.get()
    if kobo.upc != row[3] or sr.price != Decimal(row[4]) or sr.num_in_stock != row[5]:
        return False, f"Kobo's UPC/price/stock changed: {kobo.upc} {sr.price} {sr.num_in_stock}"
    if not kobo.is_discountable:
        return False, "Kobo is no longer discountable"
    if M.Product.objects.exclude(pk=kobo.pk).filter(is_public=False).exists():
        return False, "another product was hidden"
    if M.Product.objects.count() != len(S.PRODUCTS):
        return False, "products were added or deleted"
    return True, "Kobo Clara 2E hidden, price and stock unchanged"


def staff_order_status(answer):
    o = _models().Order.objects.get(number="100005")
    if o.status != "Being processed":
        return False, f"order 100005 is {o.status!r}"
    why = _first(_seeded_statuses_except("100005"), _no_orders_placed())
    return (not why), why or "order 100005 is being processed"


CHECKS = {
    "oscar-login-alice": login_alice,
    "oscar-search-open-raspberry": search_open,
    "oscar-add-basket-guest": add_basket_guest,
    "oscar-category-add-basket": category_add_basket,
    "oscar-login-add-basket": login_add_basket,
    "oscar-guest-checkout-express": guest_checkout,
    "oscar-voucher-save10": carol_voucher,
    "oscar-answer-price": answer_price,
    "oscar-answer-stock": answer_stock,
    "oscar-answer-order-status": answer_order_status,
    "oscar-edit-profile-name": edit_profile,
    "oscar-edit-address": edit_address,
    "oscar-staff-unpublish-product": staff_unpublish,
    "oscar-staff-order-status": staff_order_status,
}
