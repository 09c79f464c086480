"""The shop's seed data: plain tables, read by app.py's seed (and by its checks for the seeded values)."""

from decimal import Decimal as D

PARTNER = "Oscar Warehouse"

# (category path, product class, title, UPC, price, stock)
PRODUCTS = [
    ("Books > Computing", "Book", "The Pragmatic Programmer (20th Anniversary Edition)", "9780135957059", "37.99", 14),
    ("Books > Computing", "Book", "Clean Code", "9780132350884", "31.99", 9),
    ("Books > Computing", "Book", "Designing Data-Intensive Applications", "9781449373320", "39.99", 7),
    ("Books > Computing", "Book", "Fluent Python (2nd Edition)", "9781492056355", "49.99", 5),
    ("Books > Computing", "Book", "Python Crash Course (3rd Edition)", "9781718502703", "29.99", 18),
    ("Books > Computing", "Book", "Refactoring (2nd Edition)", "9780134757599", "41.50", 6),
    ("Books > Computing", "Book", "Introduction to Algorithms (4th Edition)", "9780262046305", "89.00", 3),
    ("Books > Fiction", "Book", "The Midnight Library", "9781786892737", "8.99", 25),
    ("Books > Fiction", "Book", "Project Hail Mary", "9781529100624", "9.99", 22),
    ("Books > Fiction", "Book", "Klara and the Sun", "9780571364879", "8.99", 12),
    ("Books > Fiction", "Book", "The Seven Moons of Maali Almeida", "9781908745903", "9.99", 8),
    ("Books > Fiction", "Book", "Tomorrow, and Tomorrow, and Tomorrow", "9781529115543", "9.49", 16),
    ("Books > Fiction", "Book", "Lessons in Chemistry", "9780857528131", "8.49", 20),
    ("Books > Cooking", "Book", "Ottolenghi Simple", "9781785031168", "27.00", 10),
    ("Books > Cooking", "Book", "Salt, Fat, Acid, Heat", "9781782112303", "26.00", 11),
    ("Books > Cooking", "Book", "The Food Lab", "9780393081084", "35.00", 4),
    ("Gadgets > Audio", "Gadget", "Sony WH-1000XM5 Wireless Headphones", "4548736132610", "319.00", 6),
    ("Gadgets > Audio", "Gadget", "JBL Flip 6 Bluetooth Speaker", "6925281999447", "99.99", 15),
    ("Gadgets > Audio", "Gadget", "Apple AirPods Pro (2nd generation)", "0194253397168", "229.00", 9),
    ("Gadgets > Audio", "Gadget", "Bose QuietComfort Earbuds II", "0017817835022", "249.95", 4),
    ("Gadgets > Computer accessories", "Gadget", "Anker PowerCore 10000 Power Bank", "0848061073232", "24.99", 31),
    ("Gadgets > Computer accessories", "Gadget", "UGREEN USB-C Hub 7-in-1", "6957303870124", "29.99", 13),
    ("Gadgets > Computer accessories", "Gadget", "Logitech MX Master 3S Mouse", "5099206103887", "89.99", 11),
    ("Gadgets > Computer accessories", "Gadget", "Keychron K2 Mechanical Keyboard", "6970176490140", "79.00", 7),
    ("Gadgets > Computer accessories", "Gadget", "SanDisk Extreme 1TB Portable SSD", "0619659182458", "109.99", 10),
    ("Gadgets > E-readers", "Gadget", "Kindle Paperwhite (16 GB)", "0840080541637", "149.99", 12),
    ("Gadgets > E-readers", "Gadget", "Kobo Clara 2E", "0681495009350", "129.99", 8),
    ("Gadgets > Smart home", "Gadget", "Raspberry Pi 5 Starter Kit (8 GB)", "5056561803326", "119.00", 6),
    ("Gadgets > Smart home", "Gadget", "Philips Hue White Starter Kit", "8719514289192", "69.99", 9),
    ("Gadgets > Smart home", "Gadget", "Amazon Echo Dot (5th Gen)", "0840080546632", "54.99", 19),
]

DESCRIPTIONS = {
    "Book": "{title}. Paperback edition, dispatched from our UK warehouse. ISBN {upc}.",
    "Gadget": "{title}. Brand new and boxed, with a two-year manufacturer warranty.",
}

# (username, email, password, first name, last name, staff)
USERS = [
    ("alice", "alice@example.com", "alice-pass-1", "Alice", "Johnson", False),
    ("bob", "bob@example.com", "bob-pass-2", "Bob", "Smith", False),
    ("carol", "carol@example.com", "carol-pass-3", "Carol", "Diaz", False),
    ("dave", "dave@example.com", "dave-pass-4", "Dave", "Miller", False),
    ("emma", "emma@example.com", "emma-pass-5", "Emma", "Wilson", False),
    ("staff", "staff@example.com", "staff-pass-1", "Sam", "Porter", True),
]

# Bob's one address book entry.
BOB_ADDRESS = dict(
    title="Mr",
    first_name="Bob",
    last_name="Smith",
    line1="7 Station Road",
    line2="",
    line4="York",
    postcode="YO1 6HT",
    phone_number="",
    notes="",
)

# Carol's open basket: one copy of Clean Code.
CAROL_BASKET = [("9780132350884", 1)]

# Seeded orders, placed in this sequence: (user, [(upc, qty)], shipping code, status, date)
ORDERS = [
    ("alice", [("9781786892737", 1)], "standard", "Shipped", "2025-03-02 10:15"),
    ("bob", [("0840080541637", 1)], "express", "Being processed", "2025-03-05 16:40"),
    ("emma", [("6925281999447", 1)], "standard", "Complete", "2025-02-11 09:05"),
    ("dave", [("9781718502703", 2)], "standard", "Pending", "2025-03-08 12:30"),
    ("emma", [("9781492056355", 1), ("0848061073232", 1)], "express", "Pending", "2025-03-09 18:20"),
    ("alice", [("6970176490140", 1)], "express", "Cancelled", "2025-01-20 14:00"),
]

VOUCHER_CODE = "SAVE10"
VOUCHER_PERCENT = D("10")
