from shop.schema import Schema, ValidationError
from shop.pricing import compute_total


class OrderSchema(Schema):
    required = ("items",)

    def load(self, data):
        data = super().load(data)
        data["total"] = compute_total(data["items"])
        return data


def place_order(data):
    try:
        return OrderSchema().load(data)
    except ValidationError:
        return None
