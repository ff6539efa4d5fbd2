"""The schema families: a shop (orders), a school (grades) and flights (held out whole).

Columns are written with the small constructors below: ``C`` (a question-usable column:
name, kind, doc, phrase), ``K`` (a foreign key with its two walking phrases) and ``D`` (a
distractor: a near-synonym of a real column, present only when a task picks it); tables
with ``T`` (name, singular, plural, columns, row counts) and schemas with ``S``.
"""

from __future__ import annotations

from itertools import product
from typing import Any

from gymforge.envs.sql.schema import Kind, SqlColumn, SqlSchema, SqlTable, column

FIRST = (
    "Ana", "Ben", "Chloe", "Dmitri", "Elif", "Farah", "Goran", "Hana", "Ines", "Jonas",
    "Kofi", "Lena", "Mateo", "Nadia", "Oskar", "Priya", "Quinn", "Rosa", "Sven", "Tomoko",
)  # fmt: skip
LAST = (
    "Silva", "Meyer", "Okafor", "Novak", "Haddad", "Kim", "Rossi", "Larsen", "Dubois", "Ito",
    "Moreau", "Petrov", "Garcia", "Nguyen", "Brennan", "Costa", "Varga", "Lindqvist", "Sato",
    "Mensah",
)  # fmt: skip
PEOPLE = tuple(f"{a} {b}" for a, b in product(FIRST, LAST))
CITIES = ("Lyon", "Porto", "Krakow", "Ghent", "Turin", "Leeds", "Basel", "Utrecht")


def C(name: str, kind: Kind, doc: str, phrase: str = "", **kw: Any) -> SqlColumn:
    return column(name, kind, doc, phrase=phrase or name.replace("_", " "), **kw)


def K(name: str, ref: str, doc: str, fwd: str, back: str) -> SqlColumn:
    return column(name, "fk", doc, references=ref, fwd=fwd, back=back)


def D(name: str, kind: Kind, doc: str, **kw: Any) -> SqlColumn:
    return column(name, kind, doc, distractor=True, **kw)


def ID(doc: str) -> SqlColumn:
    return column("id", "id", doc)


def T(
    name: str,
    singular: str,
    plural: str,
    columns: tuple[SqlColumn, ...],
    rows: tuple[int, int] = (8, 12),
) -> SqlTable:
    return SqlTable(name, columns, singular=singular, plural=plural, rows=rows)


def S(name: str, tables: tuple[SqlTable, ...], pools: dict[str, tuple[str, ...]]) -> SqlSchema:
    return SqlSchema(tables, name=name, label_pools=pools)


def pairs(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(f"{x} {y}" for x, y in product(a, b))


SHOP = S("shop", (
    T("customers", "customer", "customers", (
        ID("customer id"),
        C("name", "label", "the customer's full name"),
        C("city", "cat", "the customer's home city", values=CITIES),
        D("billing_city", "cat", "city on the billing address (may differ)", values=CITIES),
        C("segment", "cat", "customer segment", values=("retail", "business", "education")),
        C("signup_date", "date", "date the customer signed up", lo=0, hi=700),
    ), rows=(8, 12)),
    T("products", "product", "products", (
        ID("product id"),
        C("name", "label", "product name"),
        C("category", "cat", "product category",
          values=("garden", "kitchen", "office", "toys", "sports")),
        C("price", "num", "current selling price in EUR", lo=3, hi=250),
        D("list_price", "num", "manufacturer's list price in EUR (not the price charged)",
          lo=3, hi=300),
    ), rows=(6, 10)),
    T("orders", "order", "orders", (
        ID("order id"),
        K("customer_id", "customers", "the customer who placed the order",
          "placed by", "that placed"),
        C("order_date", "date", "date the order was placed", lo=0, hi=729),
        D("ship_date", "date", "date the order shipped", lo=3, hi=735),
        C("status", "cat", "order status",
          values=("pending", "shipped", "delivered", "returned")),
    ), rows=(14, 22)),
    T("order_items", "order item", "order items", (
        ID("order item id"),
        K("order_id", "orders", "the order this line belongs to", "belonging to", "that contain"),
        K("product_id", "products", "the product ordered", "for", "that appear in"),
        C("quantity", "int", "units ordered", lo=1, hi=9),
        D("discount_pct", "int", "discount in percent (not a quantity)", lo=0, hi=30),
    ), rows=(20, 34)),
), {
    "customers": PEOPLE,
    "products": pairs(
        ("Nimble", "Sturdy", "Bright", "Compact", "Classic", "Quiet", "Swift", "Lunar"),
        ("Kettle", "Stapler", "Trowel", "Racket", "Puzzle", "Lamp", "Bottle", "Desk"),
    ),
})  # fmt: skip

SCHOOL = S("school", (
    T("teachers", "teacher", "teachers", (
        ID("teacher id"),
        C("name", "label", "the teacher's full name"),
        C("department", "cat", "the teacher's department",
          values=("maths", "science", "languages", "arts")),
        C("hired_on", "date", "date the teacher was hired", "hire date", lo=0, hi=700),
    ), rows=(5, 8)),
    T("students", "student", "students", (
        ID("student id"),
        C("name", "label", "the student's full name"),
        C("year", "int", "school year (1 to 4)", "school year", lo=1, hi=4),
        C("house", "cat", "the student's house", values=("Amber", "Birch", "Cedar", "Delta")),
        D("birth_year", "int", "year of birth (not the school year)", lo=2006, hi=2010),
    ), rows=(10, 14)),
    T("courses", "course", "courses", (
        ID("course id"),
        C("title", "label", "course title"),
        K("teacher_id", "teachers", "the teacher who teaches the course",
          "taught by", "that teach"),
        C("credits", "int", "credit points", lo=1, hi=6),
        C("room", "cat", "usual room", values=("A1", "A2", "B1", "Lab")),
        D("max_credits", "int", "credit cap for the programme (not the course's credits)",
          lo=4, hi=10),
    ), rows=(6, 9)),
    T("enrollments", "enrollment", "enrollments", (
        ID("enrollment id"),
        K("student_id", "students", "the enrolled student", "of", "with"),
        K("course_id", "courses", "the course", "in", "with"),
        C("term", "cat", "term of the enrollment", values=("autumn", "spring", "summer")),
        C("grade", "num", "final grade out of 100", lo=35, hi=100),
        D("midterm_grade", "num", "midterm grade out of 100 (not the final grade)",
          lo=30, hi=100),
    ), rows=(24, 36)),
), {
    "teachers": PEOPLE,
    "students": PEOPLE,
    "courses": pairs(
        ("Algebra", "Biology", "Chemistry", "Drawing", "French", "History", "Physics"),
        ("I", "II", "III", "Lab", "Seminar", "Workshop"),
    ),
})  # fmt: skip

FLIGHTS = S("flights", (
    T("airlines", "airline", "airlines", (
        ID("airline id"),
        C("name", "label", "airline name"),
        C("country", "cat", "home country",
          values=("France", "Portugal", "Poland", "Italy", "Norway")),
        C("alliance", "cat", "alliance membership",
          values=("none", "Star", "Oneworld", "SkyTeam")),
    ), rows=(5, 8)),
    T("airports", "airport", "airports", (
        ID("airport id"),
        C("code", "label", "three-letter airport code"),
        C("city", "cat", "city served", values=CITIES),
        C("terminals", "int", "number of terminals", "number of terminals", lo=1, hi=5),
        D("gates", "int", "number of gates (not terminals)", lo=4, hi=40),
    ), rows=(6, 9)),
    T("flights", "flight", "flights", (
        ID("flight id"),
        K("airline_id", "airlines", "operating airline", "operated by", "that operate"),
        K("origin_id", "airports", "departure airport", "departing from",
          "that are the origin of"),
        C("departure_date", "date", "scheduled departure date", lo=0, hi=729),
        C("duration_min", "int", "scheduled duration in minutes", "duration", lo=45, hi=420),
        D("delay_min", "int", "average delay in minutes (not the duration)", lo=0, hi=90),
    ), rows=(14, 22)),
    T("bookings", "booking", "bookings", (
        ID("booking id"),
        C("passenger", "label", "passenger's full name", "passenger name"),
        K("flight_id", "flights", "the booked flight", "on", "with"),
        C("fare_class", "cat", "fare class", values=("economy", "premium", "business")),
        C("price", "num", "price paid in EUR", lo=40, hi=900),
        D("tax", "num", "taxes in EUR (included in nothing else)", lo=5, hi=80),
    ), rows=(20, 30)),
), {
    "airlines": pairs(
        ("Aero", "Blue", "Nord", "Sol", "Alto", "Vista"),
        ("Wings", "Air", "Jet", "Link", "Sky", "Lines"),
    ),
    "airports": tuple(a + b + c for a, b, c in product("BKLMPRTV", "AEOU", "GNSX")),
    "bookings": PEOPLE,
})  # fmt: skip

SCHEMAS: dict[str, SqlSchema] = {s.name: s for s in (SHOP, SCHOOL, FLIGHTS)}
