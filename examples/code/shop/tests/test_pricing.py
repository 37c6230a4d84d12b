from shop.pricing import compute_total


def test_total_with_tax():
    assert compute_total([{"price": 10}]) == 12
