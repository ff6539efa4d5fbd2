"""The ``invoicing`` project template: cart and invoice arithmetic in integer cents."""

from __future__ import annotations

from gymforge.envs.swe.projects import (
    Feature,
    Fn,
    Mutation,
    Project,
    cart_lines,
    cents,
)

APPLY_DISCOUNT = '''def apply_discount(cents, percent):
    """A price in cents after a percent discount (capped at 100), rounded down."""
    if percent <= 0:
        return cents
    return cents - cents * min(percent, 100) // 100
'''
SPLIT_EVENLY = '''def split_evenly(total, parts):
    """total cents in parts shares differing by at most one cent, larger shares first."""
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]
'''
CLAMP = '''def clamp(value, low, high):
    """value limited to the range from low to high."""
    return max(low, min(value, high))
'''
LINE_TOTAL = '''def line_total(unit_cents, qty, percent=0):
    """One cart line: qty units at unit_cents each, less a percent discount on the line."""
    return apply_discount(unit_cents * qty, percent)
'''
CART_TOTAL = '''def cart_total(lines, shipping=499, free_over=5000):
    """The lines' sum plus shipping; shipping is free when the sum reaches free_over."""
    subtotal = sum(line_total(u, q, p) for u, q, p in lines)
    if subtotal >= free_over:
        return subtotal
    return subtotal + shipping
'''
INVOICE = '''def invoice(lines, people):
    """Each person's share of the cart total, larger shares first."""
    return split_evenly(cart_total(lines), people)
'''
TIP = '''def tip(cents, percent):
    """A tip of percent of cents, kept between 0 and 10000 cents."""
    return clamp(cents * percent // 100, 0, 10000)
'''

INVOICING = Project(
    "invoicing",
    "cart and invoice arithmetic in integer cents",
    {
        "money": "Money arithmetic in integer cents.",
        "cart": "Cart lines and totals.",
        "billing": "Invoices built from carts.",
    },
    (
        Fn(
            "money",
            "apply_discount",
            APPLY_DISCOUNT,
            lambda r: [cents(r), r.choice([-5, 0, 1, 10, 25, 50, 100, 150])],
            "applies a discount",
            (
                Mutation("wrong_operator", "cents - cents *", "cents + cents *"),
                Mutation("missing_edge_case", "min(percent, 100)", "percent"),
                Mutation("off_by_one", "percent <= 0", "percent <= 1"),
            ),
            aliases=("discounted",),
        ),
        Fn(
            "money",
            "split_evenly",
            SPLIT_EVENLY,
            lambda r: [cents(r), r.randint(1, 5)],
            "splits an amount",
            (
                Mutation("off_by_one", "i < extra", "i <= extra"),
                Mutation("swapped_arguments", "divmod(total, parts)", "divmod(parts, total)"),
            ),
            aliases=("share_evenly", "even_shares"),
        ),
        Fn(
            "money",
            "clamp",
            CLAMP,
            lambda r: [r.randint(-50, 150), r.randint(-10, 40), r.randint(50, 120)],
            "clamps a value",
            (Mutation("swapped_arguments", "min(value, high)", "min(high, low)"),),
            aliases=("bounded", "limit"),
        ),
        Fn(
            "cart",
            "line_total",
            LINE_TOTAL,
            lambda r: (
                [cents(r), r.randint(1, 5)] + ([r.choice([10, 50])] if r.random() < 0.5 else [])
            ),
            "prices a cart line",
            (
                Mutation("wrong_default", "percent=0", "percent=5"),
                Mutation(
                    "swapped_arguments",
                    "apply_discount(unit_cents * qty, percent)",
                    "apply_discount(percent, unit_cents * qty)",
                ),
            ),
            uses=("money.apply_discount",),
            aliases=("price_line",),
        ),
        Fn(
            "cart",
            "cart_total",
            CART_TOTAL,
            lambda r: [cart_lines(r)],
            "totals a cart",
            (
                Mutation("wrong_default", "shipping=499", "shipping=500"),
                Mutation("wrong_operator", "subtotal + shipping", "subtotal - shipping"),
            ),
            uses=("cart.line_total",),
        ),
        Fn(
            "billing",
            "invoice",
            INVOICE,
            lambda r: [cart_lines(r), r.randint(1, 4)],
            "splits an invoice",
            uses=("money.split_evenly", "cart.cart_total"),
        ),
        Fn(
            "billing",
            "tip",
            TIP,
            lambda r: [r.choice([0, 999, 5000, 25000, 90000]), r.choice([0, 10, 15, 20, 30])],
            "computes a tip",
            uses=("money.clamp",),
        ),
    ),
    (
        Feature(
            "money",
            "format_cents",
            'def format_cents(cents, symbol="{symbol}"):\n'
            '    """cents as money text: sign, symbol, thousands separated by commas."""\n'
            '    sign = "-" if cents < 0 else ""\n'
            "    whole, frac = divmod(abs(cents), 100)\n"
            '    return sign + symbol + f"{{whole:,}}.{{frac:02d}}"\n',
            lambda r: [r.choice([0, 5, -5, 100, 123456, -99999, 100000000]) + r.randint(0, 99)],
            "Please add `format_cents(cents, symbol={symbol!r})` to `invoicing/money.py`: it "
            "formats an integer amount of cents as text: a `-` first when negative, then "
            "`symbol` (default {symbol!r}), the whole units with commas between thousands, a "
            "dot and exactly two digits of cents. Example: `format_cents(-123456)` is "
            "`'-{symbol}1,234.56'`.",
            ({"symbol": "$"}, {"symbol": "EUR "}, {"symbol": "£"}),
        ),
        Feature(
            "cart",
            "item_count",
            "def item_count(lines, min_qty={min_qty}):\n"
            '    """The total quantity over the lines whose quantity is at least min_qty."""\n'
            "    return sum(q for _, q, _ in lines if q >= min_qty)\n",
            lambda r: [cart_lines(r)],
            "Please add `item_count(lines, min_qty={min_qty})` to `invoicing/cart.py`: the "
            "sum of the quantities of the cart lines (`[unit_cents, qty, percent]`) whose "
            "quantity is at least `min_qty` (default {min_qty}).",
            ({"min_qty": "1"}, {"min_qty": "2"}),
        ),
    ),
)
