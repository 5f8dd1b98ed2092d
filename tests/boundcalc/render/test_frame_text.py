"""A sweep's DataFrame as text (boundcalc/render/frame_text.py): CSV and JSON round trips with
missing values, long frames shortened in the table."""

from __future__ import annotations

import csv
import io
import json

import pandas as pd

from boundcalc.render.frame_text import render_frame

FRAME = pd.DataFrame({"m": [8, 16], "eta": [float("nan"), 0.5], "ok": [True, False],
                      "label": ['a,"b"', "c"]})


def test_frame_csv_and_json_round_trip_with_missing_values():
    rows = list(csv.DictReader(io.StringIO(render_frame(FRAME, "csv"))))
    assert rows == [{"m": "8", "eta": "", "ok": "true", "label": 'a,"b"'},
                    {"m": "16", "eta": "0.5", "ok": "false", "label": "c"}]
    assert json.loads(render_frame(FRAME, "json")) == [
        {"m": 8, "eta": None, "ok": True, "label": 'a,"b"'},
        {"m": 16, "eta": 0.5, "ok": False, "label": "c"}]


def test_frame_table_shows_first_and_last_rows_of_long_frames():
    frame = pd.DataFrame({"m": range(0, 1000, 2)})
    text = render_frame(frame, "table", max_rows=10)
    assert " 998" in text and " 0" in text and "490 of 500 rows not shown" in text
