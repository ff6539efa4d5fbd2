"""Real ``.xlsx`` files, written and read with ``openpyxl``.

``export_workbook`` writes the workbook as it stands: constants with their types, formula
cells as their formula text, defined names, sheets in order; pivot tables are written as
their output values (openpyxl cannot write a pivot cache). openpyxl stores no formula
results, so a reader recomputes them (the round-trip test does, with the formula engine).
The file is byte-for-byte deterministic: document times are the world's simulated clock
and zip entries carry a fixed timestamp.

``read_workbook`` reads an ``.xlsx`` back as ``{cell: (value, formula)}``, the sheet order
and the defined names.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass, field
from datetime import datetime

from openpyxl import Workbook, load_workbook
from openpyxl.workbook.defined_name import DefinedName

from gymforge.envs.spreadsheet.cells import Value, addr, clean_number, decode
from gymforge.envs.spreadsheet.workbook import Book

ZIP_TIME = (1980, 1, 1, 0, 0, 0)
MODIFIED = re.compile(rb"(<dcterms:modified[^>]*>)[^<]*(</dcterms:modified>)")


def _stable_zip(blob: bytes, stamp: str) -> bytes:
    """The same archive with every entry's timestamp fixed (zipfile stamps the wall clock)
    and the document's modified time set to ``stamp`` (openpyxl stamps the wall clock)."""
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
            dst.writestr(fixed, data)
    return out.getvalue()


def export_workbook(book: Book, now: str) -> bytes:
    """The workbook as ``.xlsx`` bytes; ``now`` (ISO 8601) stamps the document."""
    wb = Workbook()
    wb.remove(wb.active)
    sheets = {name: wb.create_sheet(name) for name in book.sheets()}
    for row in book.db.all("SELECT * FROM cells ORDER BY sheet, row, col"):
        ws = sheets[row["sheet"]]
        cell = ws.cell(row=row["row"], column=row["col"])
        cell.value = row["formula"] if row["formula"] else decode(row)
        if row["kind"] == "s" and not row["formula"]:
            cell.data_type = "s"  # text that looks like an error code stays text
    for name, ref in book.names().items():
        wb.defined_names[name] = DefinedName(name, attr_text=ref)
    stamp = datetime.fromisoformat(now.replace("Z", "+00:00")).replace(tzinfo=None)
    wb.properties.created = wb.properties.modified = stamp
    wb.properties.creator = "gymforge"
    out = io.BytesIO()
    wb.save(out)
    return _stable_zip(out.getvalue(), stamp.strftime("%Y-%m-%dT%H:%M:%SZ"))


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
