"""django-oscar 4.2 shop for webagent's real-app suite: seed STATE / serve STATE PORT / check STATE TASK [--answer A].

Runs with the app venv's python from this folder (see ../../APP_FORMAT.md). Everything the shop writes
(SQLite database, Whoosh index, media) lives under STATE.
"""

import json
import os
import sys
import warnings
from decimal import Decimal
from pathlib import Path

HERE = Path(__file__).resolve().parent
warnings.filterwarnings("ignore", message=".*deprecated.*")


def _django(state: str) -> None:
    os.environ["OSCAR_APP_STATE"] = str(Path(state).resolve())
    os.environ["DJANGO_SETTINGS_MODULE"] = "shopsite.settings"
    sys.path.insert(0, str(HERE))
    import django

    django.setup()


# ---------------------------------------------------------------- seed


def seed(state: str) -> None:
    import shutil
    from datetime import datetime
    from zoneinfo import ZoneInfo

    Path(state).mkdir(parents=True, exist_ok=True)
    _django(state)
    import seed_data as S
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.contrib.sites.models import Site
    from django.core.management import call_command
    from django.db import transaction
    from django.db.backends.signals import connection_created
    from oscar.core.loading import get_class, get_model

    def _fast(sender, connection, **kwargs):  # seed only: no fsync per migration (STATE is built from scratch)
        if connection.vendor == "sqlite":
            with connection.cursor() as c:
                c.execute("PRAGMA synchronous=OFF")

    connection_created.connect(_fast)
    call_command("migrate", verbosity=0, interactive=False)
    media = Path(settings.MEDIA_ROOT)
    media.mkdir(parents=True, exist_ok=True)
    # A real copy (not Oscar's symlink into the venv), so STATE is self-contained.
    from django.contrib.staticfiles import finders

    shutil.copyfile(finders.find("oscar/img/image_not_found.jpg"), media / settings.OSCAR_MISSING_IMAGE_URL)

    Country = get_model("address", "Country")
    UserAddress = get_model("address", "UserAddress")
    Category = get_model("catalogue", "Category")
    Product = get_model("catalogue", "Product")
    ProductClass = get_model("catalogue", "ProductClass")
    ProductCategory = get_model("catalogue", "ProductCategory")
    Partner = get_model("partner", "Partner")
    StockRecord = get_model("partner", "StockRecord")
    Basket = get_model("basket", "Basket")
    ShippingAddress = get_model("order", "ShippingAddress")
    Order = get_model("order", "Order")
    Range = get_model("offer", "Range")
    Condition = get_model("offer", "Condition")
    Benefit = get_model("offer", "Benefit")
    ConditionalOffer = get_model("offer", "ConditionalOffer")
    Voucher = get_model("voucher", "Voucher")
    Selector = get_class("partner.strategy", "Selector")
    OrderCreator = get_class("order.utils", "OrderCreator")
    OrderTotalCalculator = get_class("checkout.calculators", "OrderTotalCalculator")
    OrderNumberGenerator = get_class("order.utils", "OrderNumberGenerator")
    from shopsite.shipping import Express, Standard

    tz = ZoneInfo(settings.TIME_ZONE)
    with transaction.atomic():
        Site.objects.update_or_create(id=1, defaults={"domain": "127.0.0.1", "name": settings.OSCAR_SHOP_NAME})
        Country.objects.create(
            iso_3166_1_a2="GB",
            iso_3166_1_a3="GBR",
            iso_3166_1_numeric="826",
            printable_name="United Kingdom",
            name="United Kingdom of Great Britain and Northern Ireland",
            display_order=1,
            is_shipping_country=True,
        )
        User = get_user_model()
        users = {}
        for username, email, password, first, last, staff in S.USERS:
            u = User(
                username=username,
                email=email,
                first_name=first,
                last_name=last,
                is_staff=staff,
                is_superuser=staff,
                date_joined=datetime(2024, 9, 1, 9, 0, tzinfo=tz),
            )
            u.set_password(password)
            u.save()
            users[username] = u
        UserAddress.objects.create(
            user=users["bob"],
            country_id="GB",
            is_default_for_shipping=True,
            is_default_for_billing=True,
            **S.BOB_ADDRESS,
        )

        partner = Partner.objects.create(name=S.PARTNER)
        classes = {
            name: ProductClass.objects.create(name=name, requires_shipping=True, track_stock=True)
            for name in ("Book", "Gadget")
        }
        categories = {}
        for path, *_ in S.PRODUCTS:
            parent_name, child_name = path.split(" > ")
            if parent_name not in categories:
                categories[parent_name] = Category.add_root(name=parent_name, is_public=True)
            if path not in categories:
                categories[path] = categories[parent_name].add_child(name=child_name, is_public=True)
        products = {}
        for i, (path, cls, title, upc, price, stock) in enumerate(S.PRODUCTS, start=1):
            p = Product.objects.create(
                title=title,
                upc=upc,
                product_class=classes[cls],
                structure="standalone",
                description=S.DESCRIPTIONS[cls].format(title=title, upc=upc),
            )
            ProductCategory.objects.create(product=p, category=categories[path])
            StockRecord.objects.create(
                product=p,
                partner=partner,
                partner_sku="OW-%04d" % i,
                price_currency="GBP",
                price=Decimal(price),
                num_in_stock=stock,
            )
            products[upc] = p

        everything = Range.objects.create(name="Everything", includes_all_products=True, is_public=False)
        condition = Condition.objects.create(range=everything, type="Count", value=1)
        benefit = Benefit.objects.create(range=everything, type="Percentage", value=S.VOUCHER_PERCENT)
        offer = ConditionalOffer.objects.create(
            name="Spring voucher SAVE10", offer_type="Voucher", condition=condition, benefit=benefit
        )
        voucher = Voucher.objects.create(
            name="Spring 10% off",
            code=S.VOUCHER_CODE,
            usage="Multi-use",
            start_datetime=datetime(2024, 1, 1, tzinfo=tz),
            end_datetime=datetime(2099, 12, 31, tzinfo=tz),
        )
        voucher.offers.add(offer)

        methods = {"standard": Standard(), "express": Express()}
        for username, lines, ship, status, when in S.ORDERS:
            user = users[username]
            basket = Basket.objects.create(owner=user)
            basket.strategy = Selector().strategy(user=user)
            for upc, qty in lines:
                basket.add_product(products[upc], qty)
            address = UserAddress.objects.filter(user=user).first()
            addr = ShippingAddress.objects.create(
                first_name=user.first_name,
                last_name=user.last_name,
                line1=address.line1 if address else "%d Park Lane" % (user.id + 10),
                line4=address.line4 if address else "London",
                postcode=address.postcode if address else "W1K 1AA",
                country_id="GB",
            )
            method = methods[ship]
            charge = method.calculate(basket)
            total = OrderTotalCalculator().calculate(basket, charge)
            order = OrderCreator().place_order(
                basket=basket,
                total=total,
                shipping_method=method,
                shipping_charge=charge,
                user=user,
                shipping_address=addr,
                order_number=OrderNumberGenerator().order_number(basket),
                status="Pending",
            )
            basket.submit()
            placed = datetime.strptime(when, "%Y-%m-%d %H:%M").replace(tzinfo=tz)
            Order.objects.filter(pk=order.pk).update(status=status, date_placed=placed)
            order.lines.update(status=status)

        carol_basket = Basket.objects.create(owner=users["carol"])
        carol_basket.strategy = Selector().strategy(user=users["carol"])
        for upc, qty in S.CAROL_BASKET:
            carol_basket.add_product(products[upc], qty)

    call_command("rebuild_index", interactive=False, verbosity=0)


# ---------------------------------------------------------------- serve


def serve(state: str, port: str) -> None:
    _django(state)
    from django.core.wsgi import get_wsgi_application
    from waitress import serve as waitress_serve

    app = get_wsgi_application()
    print(f"oscar: serving on http://127.0.0.1:{port}/ (state {state})", flush=True)
    waitress_serve(app, host="127.0.0.1", port=int(port), threads=6, ident="oscar")


# ---------------------------------------------------------------- check

from checks import CHECKS  # noqa: E402  (plain functions; Django is set up before one runs)


def check(state: str, task_id: str, answer) -> None:
    if task_id not in CHECKS:
        raise SystemExit(f"oscar: no check for task {task_id!r}")
    _django(state)
    from django.core.exceptions import ObjectDoesNotExist

    try:
        ok, why = CHECKS[task_id](answer)
    except ObjectDoesNotExist as exc:  # the run deleted a record the task needs (a user, a product)
        ok, why = False, f"a record the task needs no longer exists: {exc}"
    print(json.dumps({"ok": bool(ok), "why": why}))


def main(argv) -> None:
    if len(argv) >= 2 and argv[0] == "seed":
        seed(argv[1])
    elif len(argv) >= 3 and argv[0] == "serve":
        serve(argv[1], argv[2])
    elif len(argv) >= 3 and argv[0] == "check":
        answer = None
        if "--answer" in argv:
            i = argv.index("--answer")
            answer = argv[i + 1] if i + 1 < len(argv) else ""
        check(argv[1], argv[2], answer)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
