"""Sending a stored file with HTTP Range support, so a browser's audio or video player can seek.

Browsers ask for recordings in pieces (``Range: bytes=START-END``) and will not seek a file served
only whole; Django's ``FileResponse`` ignores the header. The rules here follow RFC 9110 §14:

- One range, ``bytes=a-b``, ``bytes=a-`` or ``bytes=-n`` (the last n bytes), gets ``206 Partial
  Content`` with ``Content-Range: bytes a-b/size``; an end past the file is cut to its last byte.
- A range that starts past the end (or asks for the last 0 bytes, or any range of an empty file)
  gets ``416 Range Not Satisfiable`` with ``Content-Range: bytes */size``.
- A header that does not parse, a unit other than bytes, or several ranges at once is ignored: the
  whole file, ``200`` (the RFC lets a server do so; players ask for one range).
- ``If-Range`` with a validator other than this file's ``ETag`` or ``Last-Modified`` means the file
  changed since the client's piece: the whole file, ``200``.
- Every answer says ``Accept-Ranges: bytes`` and is private to the asker (``Cache-Control: private``).

The body is read in blocks as it is sent, on a thread under ASGI (``FileSliceResponse``), so a
large recording never sits in memory whole.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.utils.http import http_date

BLOCK = 256 * 1024
_RANGE = re.compile(r"^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$", re.IGNORECASE)


class Unsatisfiable(ValueError):
    """The range asked for lies outside the file."""


def requested_range(header: str, size: int) -> tuple[int, int] | None:
    """The inclusive (first, last) byte of ``header`` over a file of ``size`` bytes; None to send it whole.

    Raises ``Unsatisfiable`` for a well-formed range no byte of the file is in.
    """
    match = _RANGE.match(header or "")
    if match is None:
        return None  # unparsable, another unit, or several ranges: ignored
    first, last = match.groups()
    if not first and not last:
        return None
    if not first:  # the last n bytes
        suffix = int(last)
        if suffix == 0 or size == 0:
            raise Unsatisfiable
        return max(0, size - suffix), size - 1
    start = int(first)
    end = int(last) if last else size - 1
    if last and end < start:
        return None  # malformed: ignored, as an unparsable header is
    if start >= size:
        raise Unsatisfiable
    return start, min(end, size - 1)


class FileSliceResponse(StreamingHttpResponse):
    """``length`` bytes of the file at ``path`` from ``offset``, read in blocks as they are sent.

    Under WSGI the blocks come from a plain iterator; under ASGI ``__aiter__`` reads each block on a
    thread, so Django does not gather a synchronous iterator into one list first.
    """

    def __init__(self, path: Path, offset: int, length: int, **kwargs: Any) -> None:
        self._slice = (path, offset, length)
        super().__init__(self._blocks(), **kwargs)
        self["Content-Length"] = str(length)

    def _blocks(self) -> Iterator[bytes]:
        path, offset, length = self._slice
        with open(path, "rb") as file:
            file.seek(offset)
            while length > 0:
                block = file.read(min(BLOCK, length))
                if not block:
                    return
                length -= len(block)
                yield block

    async def __aiter__(self) -> AsyncIterator[bytes]:
        blocks = self._blocks()
        take = sync_to_async(lambda: next(blocks, b""), thread_sensitive=False)
        try:
            while block := await take():
                yield block
        finally:
            blocks.close()


def serve_file(request: HttpRequest, path: Path, content_type: str) -> HttpResponse:
    """``path`` as the answer to ``request`` (GET or HEAD), whole or the one byte range it asks for."""
    stat = path.stat()
    size = stat.st_size
    etag = f'"{size:x}-{stat.st_mtime_ns:x}"'
    last_modified = http_date(stat.st_mtime)
    common = {"Accept-Ranges": "bytes", "ETag": etag, "Last-Modified": last_modified,
              "Cache-Control": "private, max-age=0", "Content-Disposition": "inline"}
    header = request.headers.get("Range", "")
    if_range = request.headers.get("If-Range", "").strip()
    if if_range and if_range not in (etag, last_modified):
        header = ""  # the client's pieces are of another version of the file
    try:
        wanted = requested_range(header, size)
    except Unsatisfiable:
        return HttpResponse(status=416, headers={**common, "Content-Range": f"bytes */{size}"})
    if wanted is None:
        return FileSliceResponse(path, 0, size, content_type=content_type, headers=common)
    first, last = wanted
    return FileSliceResponse(
        path, first, last - first + 1, status=206, content_type=content_type,
        headers={**common, "Content-Range": f"bytes {first}-{last}/{size}"},
    )
