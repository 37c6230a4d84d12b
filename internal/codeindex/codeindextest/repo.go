// Package codeindextest has a small repository for the tests of the code
// context packages and plugins.
package codeindextest

import (
	"os"
	"path/filepath"
	"testing"
)

// SampleRepo is a small repository: a Python package whose schema module
// everything uses, a Go helper, and files without a parser.
var SampleRepo = map[string]string{
	"README.md":        "# shop\n\nA tiny shop.\n",
	"docs/guide.txt":   "How to order.\n",
	"shop/__init__.py": "from shop.schema import Schema, ValidationError\n",
	"shop/schema.py": `class ValidationError(Exception):
    pass


class Schema:
    def load(self, data):
        errors = self.validate(data)
        if errors:
            raise ValidationError(errors)
        return data

    def validate(self, data):
        return {}


def _private_helper():
    return None
`,
	"shop/orders.py": `from shop.schema import Schema, ValidationError
from shop.pricing import compute_total


class OrderSchema(Schema):
    def load(self, data):
        data = super().load(data)
        data["total"] = compute_total(data["items"])
        return data


def place_order(data):
    try:
        return OrderSchema().load(data)
    except ValidationError:
        return None
`,
	"shop/pricing.py": `TAX_RATE = 0.2


def compute_total(items):
    return sum(apply_tax(i["price"]) for i in items)


def apply_tax(price):
    return price * (1 + TAX_RATE)
`,
	"tools/report.go": `package tools

// Report sums prices.
type Report struct{ Total float64 }

// Add adds one price.
func (r *Report) Add(price float64) { r.Total += price }

// NewReport returns an empty report.
func NewReport() *Report { return &Report{} }
`,
}

// WriteRepo writes files under a new temporary directory and returns it.
func WriteRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	if err := WriteFiles(root, files); err != nil {
		t.Fatal(err)
	}
	return root
}

// WriteFiles writes files (slash-separated paths to content) under root.
func WriteFiles(root string, files map[string]string) error {
	for p, text := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}
