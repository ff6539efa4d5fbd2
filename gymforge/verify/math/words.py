"""Words after a number: units, marks, and the descriptive words a correct answer carries.

``\\boxed{252 \\text{ ways}}`` answers 252: "ways" says what was counted. ``\\boxed{5\\text{ km}}``
does not answer 5 m, nor a unitless 5 (a unit the gold does not state is a claim the gold
cannot confirm). ``\\boxed{5 \\text{ thousand}}`` is not 5: some words change the value or
the logic, and those are never ignored. ``classify`` sorts a trailing text into:

- ``"none"``: no unit at all (``units``, ``square units``, degrees, ``percent``: marks the
  verifier already treats as the bare number, as it does ``90^\\circ`` and ``50\\%``);
- ``"unit"``: a unit of measure (``km``, ``cm^2``, ``km/h``, ``dollars``, ``hours``);
- ``"descriptive"``: plain words that only name what the number counts (``ways``,
  ``different arrangements``, ``people in total``);
- ``"changes"``: a word that changes the value or the logic (``thousand``, ``squared``,
  ``not``, ``or``, ``plus``, ``if``...), or anything that is not plain words.
"""

from __future__ import annotations

import re
from typing import Literal

Kind = Literal["none", "unit", "descriptive", "changes"]

UNIT_ALIASES = {
    "meters": "m", "meter": "m", "metres": "m", "metre": "m", "kilometers": "km",
    "kilometer": "km", "kilometres": "km", "kilometre": "km", "centimeters": "cm",
    "centimeter": "cm", "centimetres": "cm", "centimetre": "cm", "millimeters": "mm",
    "millimeter": "mm", "millimetres": "mm", "seconds": "s", "second": "s", "sec": "s",
    "secs": "s", "minutes": "min", "minute": "min", "mins": "min", "hours": "h", "hour": "h",
    "hr": "h", "hrs": "h", "kilograms": "kg", "kilogram": "kg", "grams": "g", "gram": "g",
    "inches": "in", "inch": "in", "feet": "ft", "foot": "ft", "miles": "mi", "mile": "mi",
    "dollars": "dollar", "cents": "cent", "liters": "L", "litres": "L", "liter": "L",
    "litre": "L", "days": "day", "weeks": "week", "months": "month", "years": "year",
    "yards": "yd", "yard": "yd", "pounds": "lb", "pound": "lb", "lbs": "lb", "ounces": "oz",
    "ounce": "oz", "gallons": "gal", "gallon": "gal", "milliliters": "mL", "millilitres": "mL",
    "ml": "mL", "tons": "ton", "tonnes": "tonne", "euros": "euro", "radians": "rad",
    "radian": "rad", "mph": "mi/h", "kph": "km/h", "kmh": "km/h",
}  # fmt: skip
"""Spellings of one unit: normalised before two units are compared."""

UNITS = frozenset(UNIT_ALIASES.values()) | {
    "nm", "um", "mg", "ms", "K", "kelvin", "celsius", "fahrenheit", "acre", "acres",
    "hectare", "hectares", "ha", "cc", "quart", "quarts", "pint", "pints", "W", "kW", "J",
    "kJ", "N", "Pa", "V", "A", "Hz", "cal", "kcal", "mol",
}  # fmt: skip
"""Units of measure, normalised (see ``UNIT_ALIASES``)."""

NO_UNIT = frozenset({"units", "unit", "squareunits", "squnits", "cubicunits", "deg", "degrees",
                     "degree", "percent", "percentage", "percentagepoints"})  # fmt: skip
"""Marks that stand for no unit at all (after spaces and braces are removed)."""

CHANGES = frozenset({
    # scale: the number is not what the words say it is
    "hundred", "hundreds", "thousand", "thousands", "million", "millions", "billion",
    "billions", "trillion", "dozen", "dozens", "half", "halves", "third", "thirds",
    "quarter", "quarters", "fourth", "fourths", "tenth", "tenths", "hundredth", "hundredths",
    "thousandth", "thousandths", "squared", "cubed", "percentile", "per", "lakh", "lakhs",
    "crore", "crores", "tens", "bn", "mn", "reciprocal", "inverse",
    # arithmetic and comparison ("5 more", "3 times" only name what was counted)
    "plus", "minus", "over", "divided", "than", "least", "most",
    "greater", "smaller", "larger", "above", "below", "under", "exceed", "exceeds",
    # logic and hedges
    "not", "no", "none", "nor", "or", "and", "either", "neither", "except", "unless", "if",
    "else", "otherwise", "but", "maybe", "perhaps", "possibly", "probably", "wrong",
    "incorrect", "false", "isnt", "isn't", "never", "instead", "mod", "modulo", "remainder",
    # number words: "5 six" says two numbers
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    "first", "second", "twice", "thrice", "double", "triple", "negative", "positive", "point",
})  # fmt: skip
"""Words that change the value or the logic: a text holding one is never just descriptive."""

_SYMBOL_UNITS = frozenset(u for u in UNITS if len(u) <= 3 and u != "in")  # "in total"
_WORD = re.compile(r"[A-Za-z]+(?:['\u2019-][A-Za-z]+)*")
_PLAIN = re.compile(r"[A-Za-z\s'\u2019().,:-]+")


def norm_unit(unit: str | None) -> str | None:
    """The unit's normal spelling, or None when it stands for no unit (``units``, ``deg``)."""
    if unit is None:
        return None
    s = re.sub(r"[\s{}\\~]|\$", "", unit)
    s = UNIT_ALIASES.get(s, s)
    return None if s.lower() in NO_UNIT or not s else s


def classify(unit: str) -> Kind:
    """What the text after a number is (see the module docstring)."""
    if norm_unit(unit) is None:
        return "none"
    text = unit.replace("\\", " ").strip()
    if not _PLAIN.fullmatch(text):
        # exponents, slashes or digits: a compound unit (cm^2, km/h) or more than words
        return "unit" if _compound_unit(text) else "changes"
    words = _WORD.findall(text)
    if not words:
        return "changes"
    lowered = [w.lower().replace("\u2019", "'") for w in words]
    if any(w in CHANGES for w in lowered):
        return "changes"
    if len(words) == 1 or words[0] in _SYMBOL_UNITS:
        first = UNIT_ALIASES.get(words[0], UNIT_ALIASES.get(lowered[0], words[0]))
        if first in UNITS or lowered[0] in UNITS:
            return "unit"
    if len(words) == 1 and len(words[0]) == 1:
        return "unit"  # a lone letter after a number is a unit symbol (or a variable)
    if any(UNIT_ALIASES.get(w, w) in UNITS for w in lowered if len(w) > 3):
        return "unit"  # "square feet", "cubic meters", "light years"
    return "descriptive"


def _compound_unit(text: str) -> bool:
    parts = [p for p in re.split(r"[\s/^*.\-{}()]+|\d+", text) if p]
    return bool(parts) and all(
        UNIT_ALIASES.get(p, UNIT_ALIASES.get(p.lower(), p)) in UNITS for p in parts
    )
