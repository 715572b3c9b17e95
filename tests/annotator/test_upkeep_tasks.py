"""The annotator's hourly upkeep on the queue: ratings files kept for an import nobody confirmed go after a day."""

import os
import time

from django.core.files.uploadedfile import SimpleUploadedFile

from annotator.external_ratings import uploads
from annotator.tasks import remove_expired_rating_uploads


def test_the_hourly_upkeep_deletes_ratings_files_kept_longer_than_a_day(settings, tmp_path, caplog):
    settings.VAR_DIR = tmp_path
    _, old = uploads.keep(1, 2, SimpleUploadedFile("old.csv", b"a,b\n"))
    _, fresh = uploads.keep(1, 2, SimpleUploadedFile("fresh.csv", b"a,b\n"))
    long_ago = time.time() - uploads.KEEP_UPLOADS.total_seconds() - 60
    os.utime(old.parent, (long_ago, long_ago))

    with caplog.at_level("INFO", logger="parley.upkeep"):
        removed = remove_expired_rating_uploads.call_local()

    assert removed == 1 and not old.parent.exists() and fresh.is_file()
    assert "Upkeep: deleted 1 expired ratings upload(s)" in caplog.text
