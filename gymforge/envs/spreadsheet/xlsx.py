"""Real ``.xlsx`` files, written and read with ``openpyxl``.

``export_workbook`` writes the workbook as it stands: constants with their types, formula
cells as their formula text *and their cached values* (the world's last computed value,
as a spreadsheet application saves it), defined names, sheets in order; pivot tables are
written as their output values (openpyxl cannot write a pivot cache). openpyxl writes no
formula results, so the cached values are put into each sheet's XML afterwards: a reader
that does not compute (``pandas.read_excel``, ``openpyxl``'s ``data_only``) then sees the
values instead of empty cells. The file is byte-for-byte deterministic: document times are
the world's simulated clock and zip entries carry a fixed timestamp.

``read_workbook`` reads an ``.xlsx`` back as ``{cell: (value, formula)}``, the sheet order
and the defined names.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from xml.sax.saxutils import escape

from openpyxl import Workbook, load_workbook
from openpyxl.workbook.defined_name import DefinedName

from gymforge.envs.spreadsheet.cells import Value, addr, clean_number, decode
from gymforge.envs.spreadsheet.workbook import Book

ZIP_TIME = (1980, 1, 1, 0, 0, 0)
MODIFIED = re.compile(rb"(<dcterms:modified[^>]*>)[^<]*(</dcterms:modified>)")
FORMULA_CELL = re.compile(rb'<c r="([A-Z]+[0-9]+)"([^>]*)>(<f(?: [^>]*)?>[^<]*</f>)<v\s*/></c>')
TYPE_ATTR = re.compile(rb'\s+t="[^"]*"')


def cached_cell(kind: str, value: Value) -> tuple[bytes, bytes] | None:
    """The ``t`` attribute (none for a number) and ``<v>`` text caching a formula's value
    of ``kind`` (the cells table's: n, s, b or e); None for an empty result."""
    if value is None:
        return None
    if kind == "b":
        return b' t="b"', b"1" if value else b"0"
    if kind == "n":
        return b"", repr(value).encode()
    return (b' t="e"' if kind == "e" else b' t="str"'), escape(str(value)).encode()


def _cache_values(values: dict[str, tuple[str, Value]]) -> Callable[[bytes], bytes]:
    """A rewrite of one sheet's XML giving each formula cell in ``values`` its value."""

    def rewrite(xml: bytes) -> bytes:
        def fill(m: re.Match[bytes]) -> bytes:
            found = values.get(m.group(1).decode())
            cached = cached_cell(*found) if found is not None else None
            if cached is None:
                return m.group(0)
            kind, text = cached
            attrs = TYPE_ATTR.sub(b"", m.group(2))
            return b'<c r="%s"%s%s>%s<v>%s</v></c>' % (m.group(1), attrs, kind, m.group(3), text)

        return FORMULA_CELL.sub(fill, xml)

    return rewrite


def _stable_zip(
    blob: bytes, stamp: str, rewrites: dict[str, Callable[[bytes], bytes]] | None = None
) -> bytes:
    """The same archive with every entry's timestamp fixed (zipfile stamps the wall clock),
    the document's modified time set to ``stamp`` (openpyxl stamps the wall clock) and the
    entries named in ``rewrites`` rewritten."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(blob)) as src,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst,
    ):
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, ZIP_TIME)
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = info.external_attr
            data = src.read(info.filename)
            if info.filename == "docProps/core.xml":
                data = MODIFIED.sub(rb"\g<1>" + stamp.encode() + rb"\g<2>", data)
            if rewrites and info.filename in rewrites:
                data = rewrites[info.filename](data)
            dst.writestr(fixed, data)
    return out.getvalue()


def export_workbook(book: Book, now: str) -> bytes:
    """The workbook as ``.xlsx`` bytes; ``now`` (ISO 8601) stamps the document."""
    wb = Workbook()
    wb.remove(wb.active)
    sheets = {name: wb.create_sheet(name) for name in book.sheets()}
    cached: dict[str, dict[str, tuple[str, Value]]] = {name: {} for name in sheets}
    for row in book.db.all("SELECT * FROM cells ORDER BY sheet, row, col"):
        ws = sheets[row["sheet"]]
        cell = ws.cell(row=row["row"], column=row["col"])
        cell.value = row["formula"] if row["formula"] else decode(row)
        if row["formula"]:
            cached[row["sheet"]][cell.coordinate] = (row["kind"], decode(row))
        if row["kind"] == "s" and not row["formula"]:
            cell.data_type = "s"  # text that looks like an error code stays text
    for name, ref in book.names().items():
        wb.defined_names[name] = DefinedName(name, attr_text=ref)
    stamp = datetime.fromisoformat(now.replace("Z", "+00:00")).replace(tzinfo=None)
    wb.properties.created = wb.properties.modified = stamp
    wb.properties.creator = "gymforge"
    out = io.BytesIO()
    wb.save(out)
    # openpyxl writes the i-th worksheet to xl/worksheets/sheet{i}.xml
    rewrites = {
        f"xl/worksheets/sheet{i}.xml": _cache_values(cached[ws.title])
        for i, ws in enumerate(wb.worksheets, start=1)
    }
    return _stable_zip(out.getvalue(), stamp.strftime("%Y-%m-%dT%H:%M:%SZ"), rewrites)


@dataclass
class ReadBack:
    """What an ``.xlsx`` holds: ``cells`` maps ``Sheet!A1`` to ``(value, formula)``."""

    sheets: list[str]
    cells: dict[str, tuple[Value, str | None]] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)


def read_workbook(blob: bytes) -> ReadBack:
    wb = load_workbook(io.BytesIO(blob))
    out = ReadBack(sheets=list(wb.sheetnames))
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                v = cell.value
                if v is None:
                    continue
                key = addr(ws.title, cell.row, cell.column)
                if isinstance(v, str) and cell.data_type == "f":
                    out.cells[key] = (None, v)
                elif isinstance(v, float):
                    out.cells[key] = (clean_number(v), None)
                else:
                    out.cells[key] = (v, None)
    for name, dn in wb.defined_names.items():
        out.names[name] = str(dn.attr_text)
    return out
