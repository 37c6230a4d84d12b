TAX_RATE = 0.2


def compute_total(items):
    """The order total, tax included."""
    return sum(apply_tax(item["price"]) * item.get("quantity", 1) for item in items)


def apply_tax(price):
    return round(price * (1 + TAX_RATE))
