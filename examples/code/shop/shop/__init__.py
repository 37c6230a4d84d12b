from shop.schema import Schema, ValidationError
