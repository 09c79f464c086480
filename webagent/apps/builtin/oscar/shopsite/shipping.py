from decimal import Decimal as D

from oscar.apps.shipping import methods
from oscar.apps.shipping.repository import Repository as CoreRepository


class Standard(methods.FixedPrice):
    code = "standard"
    name = "Standard delivery (3-5 days)"
    charge_excl_tax = D("3.95")
    charge_incl_tax = D("3.95")


class Express(methods.FixedPrice):
    code = "express"
    name = "Express delivery (next day)"
    charge_excl_tax = D("9.95")
    charge_incl_tax = D("9.95")


class Repository(CoreRepository):
    methods = (Standard(), Express())
