"""Every number of the agreement report, and every refusal of the CSV reader, kept for comparison.

A change to how the report is computed (issue 28: a columnar reader, integer codes once) must not
move a number or change a message. ``--save`` runs the report on every long-format CSV at hand
(the fixtures under ``tests/``, Sotopia-EVAL ratings in ``tests/data/ratings/`` turned into the long
format, synthetic files of every shape: clusters, truths, conditions, judge scores, declared
categories and scales, blank values and questions, crossed and unbalanced designs, two annotators)
and reads a few hundred broken variants of them (a cell made blank, non-finite, out of its
categories, a duplicate row, a bad encoding, ...), and writes every report and every message to a
JSON file. ``--compare`` does the same with today's code and compares: numbers exactly, or within
``--tolerance`` (relative, default 1e-12) where the order of a floating-point sum may differ.

    .venv/bin/python perf/agreement_snapshot.py --save /tmp/before.json
    .venv/bin/python perf/agreement_snapshot.py --compare /tmp/before.json
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
HEADER = ["item", "annotator", "question", "value", "cluster", "truth", "condition", "judge"]
RESAMPLES = 200


def synthetic(seed: int) -> tuple[str, dict[str, Any]]:
    """A CSV text of a random design, and the reader's options for it."""
    rng = np.random.default_rng(seed)
    n_items = int(rng.integers(2, 60))
    pool = int(rng.integers(2, 9))
    crossed = rng.random() < 0.3
    two = rng.random() < 0.2
    if two:
        pool = 2
    rows: list[list[str]] = []
    questions = {
        "cat": ["none", "semantic", "emotional", "cultural"][: int(rng.integers(2, 5))],
        "likert": [str(v) for v in range(1, int(rng.integers(3, 8)))],
        "slider": None,
    }
    options: dict[str, Any] = {}
    if rng.random() < 0.5:
        options["categories"] = {"cat": [*questions["cat"], "other"]}
    if rng.random() < 0.5:
        options["scales"] = {"slider": (0.0, 100.0)}
    if rng.random() < 0.3:
        options["categorical"] = ["likert"]
    with_cluster, with_truth, with_condition, with_judge = (rng.random(4) < 0.7)
    for item in range(n_items):
        k = pool if crossed else int(rng.integers(1, pool + 1))
        raters = rng.choice(pool, size=k, replace=False)
        truth = str(rng.choice(questions["cat"]))
        cluster = f"s{int(rng.integers(0, max(n_items // 3, 1)))}" if rng.random() < 0.9 else ""
        condition = str(rng.choice(["a", "b", "c"])) if rng.random() < 0.9 else ""
        for question, choices in questions.items():
            judge = f"{rng.normal(3, 1):.3f}" if rng.random() < 0.8 else ""
            for rater in raters:
                if question == "slider":
                    value = f"{rng.uniform(0, 100):.{int(rng.integers(0, 4))}f}"
                elif question == "cat":
                    value = truth if rng.random() < 0.6 else str(rng.choice(choices))
                else:
                    value = str(rng.choice(choices))
                if rng.random() < 0.05:
                    value = ""
                rows.append([
                    f"i{item}", f"r{rater}", question, value, cluster,
                    truth if question == "cat" else (value if rng.random() < 0.3 else ""),
                    condition, judge if question != "cat" else "",
                ])
    keep = [True, True, True, True, bool(with_cluster), bool(with_truth), bool(with_condition), bool(with_judge)]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([name for name, kept in zip(HEADER, keep, strict=True) if kept])
    order = rng.permutation(len(rows)) if rng.random() < 0.5 else np.arange(len(rows))
    for index in order:
        writer.writerow([cell for cell, kept in zip(rows[index], keep, strict=True) if kept])
    return out.getvalue(), options


def sotopia_long() -> str:
    """tests/data/ratings/sotopia_eval_long.csv as item (episode:seat), annotator, question, value."""
    source = ROOT / "tests" / "data" / "ratings" / "sotopia_eval_long.csv"
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["item", "annotator", "question", "value"])
    with open(source, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            writer.writerow([f"{row['episode_id']}:{row['seat']}", row["annotator_id"], row["question"], row["value"]])
    return out.getvalue()


def good_cases() -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path in sorted((ROOT / "tests" / "stats" / "fixtures").glob("*.csv")):
        yield f"fixture:{path.name}", path.read_text(encoding="utf-8"), {}
    yield "sotopia_eval_long", sotopia_long(), {}
    yield "sotopia_eval_long:categorical", sotopia_long(), {"categorical": ["believability"]}
    for seed in range(120):
        text, options = synthetic(seed)
        yield f"synthetic:{seed}", text, options


BAD_CELLS = ["", " ", "nan", "inf", "-Infinity", "1e400", "n/a", "3,5", "=1+2", "other", "99", "-1", "1e-400", "+.5"]


def broken_cases(text: str, seed: int) -> Iterator[tuple[str, str]]:
    """Variants of a CSV text with one thing wrong (or odd) in each."""
    rng = np.random.default_rng(seed)
    rows = list(csv.reader(io.StringIO(text)))
    header = rows[0]
    for attempt in range(12):
        changed = [list(row) for row in rows]
        row = int(rng.integers(1, len(rows)))
        column = int(rng.integers(0, len(header)))
        what = attempt % 4
        if what == 0:
            changed[row][column] = str(rng.choice(BAD_CELLS))
        elif what == 1:
            changed.insert(int(rng.integers(row, len(changed) + 1)), list(changed[row]))  # a duplicate
        elif what == 2:
            changed[row] = changed[row][:-1]  # a short row
        else:
            changed[row][column] = f"  {changed[row][column]}  "  # spaces around a cell
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows(changed)
        yield f"{attempt}:{what}:{row}:{column}", out.getvalue()
    yield "crlf", text.replace("\n", "\r\n")
    yield "bom", "\ufeff" + text
    yield "blank-lines", text.replace("\n", "\n\n", 3)
    yield "upper-header", text.replace(header[0], header[0].upper(), 1)


def run(text: str, options: dict[str, Any], name: str) -> dict[str, Any]:
    from benchmark.stats.csv_input import CsvProblem, OptionProblem, read_long_csv
    from benchmark.stats.report import agreement_report

    try:
        table, settled = read_long_csv(text, name=name, **options)
    except (CsvProblem, OptionProblem) as problem:
        return {"error": f"{type(problem).__name__}: {problem}"}
    report = agreement_report(table, **settled.as_arguments(), resamples=RESAMPLES, seed=3)
    return {"input": settled.to_dict(), "rows": len(table), **report}


def run_bytes(data: bytes, name: str) -> dict[str, Any]:
    """A file read from disk (its encoding checked there)."""
    import tempfile

    from benchmark.stats.csv_input import CsvProblem, read_long_csv

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / name
        path.write_bytes(data)
        try:
            table, settled = read_long_csv(path)
        except CsvProblem as problem:
            return {"error": f"CsvProblem: {problem}"}
    return {"input": settled.to_dict(), "rows": len(table)}


def snapshot() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, text, options in good_cases():
        out[name] = run(text, options, "ratings.csv")
        if name.startswith("fixture:") or (name.startswith("synthetic:") and int(name.split(":")[1]) < 40):
            for variant, broken in broken_cases(text, len(text)):
                out[f"{name}|{variant}"] = run(broken, options, "ratings.csv")
    fixture = (ROOT / "tests" / "stats" / "fixtures" / "fleiss_1971.csv").read_bytes()
    out["bytes:latin1"] = run_bytes(fixture + "1,A,q,caf\xe9\n".encode("latin-1"), "latin.csv")
    out["bytes:bom"] = run_bytes(b"\xef\xbb\xbf" + fixture, "bom.csv")
    out["bytes:nul"] = run_bytes(fixture + b"1,A,q,\x00\n", "nul.csv")
    out["bytes:quoted-newline"] = run_bytes(fixture + b'"x\ny",A,diagnosis,4\n"x\ny",B,diagnosis,4\n', "nl.csv")
    out["bytes:unclosed-quote"] = run_bytes(fixture + b'"x,A,diagnosis,4\n', "quote.csv")
    out["bytes:empty"] = run_bytes(b"", "empty.csv")
    out["bytes:semicolons"] = run_bytes(b"item;annotator;question;value\n1;A;q;3\n", "semi.csv")
    out["frame:perf"] = frame_report()
    return out


def frame_report() -> dict[str, Any]:
    """The report of an in-memory table, as the study reports hand them over (perf/agreement_report.py's study)."""
    sys.path.insert(0, str(ROOT / "perf"))
    from agreement_report import synthetic_study

    from benchmark.stats.report import agreement_report

    table = synthetic_study(600)
    table["value"] = table["value"].astype(str)
    return agreement_report(table, categorical=["barrier_type"], resamples=RESAMPLES, seed=0)


def compare(before: Any, after: Any, tolerance: float, path: str, found: list[str], counted: list[int]) -> None:
    if isinstance(before, dict) and isinstance(after, dict):
        if list(before) != list(after):
            found.append(f"{path}: keys {list(before)} became {list(after)}")
        for key in before.keys() & after.keys():
            compare(before[key], after[key], tolerance, f"{path}.{key}", found, counted)
    elif isinstance(before, list) and isinstance(after, list):
        if len(before) != len(after):
            found.append(f"{path}: {len(before)} entries became {len(after)}")
        for index, (old, new) in enumerate(zip(before, after, strict=False)):
            compare(old, new, tolerance, f"{path}[{index}]", found, counted)
    elif isinstance(before, float) and isinstance(after, float | int) and not isinstance(after, bool):
        counted[0] += 1
        if before != after:
            counted[1] += 1
            if not math.isclose(before, after, rel_tol=tolerance, abs_tol=tolerance):
                found.append(f"{path}: {before!r} became {after!r}")
    else:
        counted[0] += isinstance(before, int | float) and not isinstance(before, bool)
        if type(before) is not type(after) or before != after:
            found.append(f"{path}: {before!r} became {after!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--save", metavar="PATH", help="Write today's reports and messages here.")
    action.add_argument("--compare", metavar="PATH", help="Compare today's with those saved here.")
    parser.add_argument("--tolerance", type=float, default=1e-12)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    now = snapshot()
    if args.save:
        Path(args.save).write_text(json.dumps(now, indent=1, ensure_ascii=False, allow_nan=False), encoding="utf-8")
        errors = sum(1 for case in now.values() if "error" in case)
        print(f"saved {len(now)} cases ({errors} refused with a message) to {args.save}")
        return
    before = json.loads(Path(args.compare).read_text(encoding="utf-8"))
    found: list[str] = []
    counted = [0, 0]
    compare(before, json.loads(json.dumps(now, allow_nan=False)), args.tolerance, "", found, counted)
    print(f"{len(before)} cases, {counted[0]} numbers compared; {counted[1]} floats differ in the last bits "
          f"(within {args.tolerance:g}); {len(found)} differences")
    for line in found[:60]:
        print("  " + line)
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
