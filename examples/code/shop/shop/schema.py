class ValidationError(Exception):
    """Raised when data does not match a schema."""


class Schema:
    """Loads and validates dictionaries."""

    required = ()

    def load(self, data):
        errors = self.validate(data)
        if errors:
            raise ValidationError(errors)
        return data

    def validate(self, data):
        return {name: "missing" for name in self.required if name not in data}
