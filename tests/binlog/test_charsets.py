"""Collation table and codecs, checked against MariaDB 10.11.19's information_schema
(COLLATION_CHARACTER_SET_APPLICABILITY) and MySQL 8 collation ids."""
from __future__ import annotations

import pytest

from binlog.charsets import COLLATIONS, codec_for_collation, decode_mysql_latin1

SERVER_IDS = [  # (id, charset) as reported by the MariaDB 10.11.19 server
    (1, "big5"), (5, "latin1"), (8, "latin1"), (11, "ascii"), (28, "gbk"), (33, "utf8mb3"),
    (35, "ucs2"), (45, "utf8mb4"), (46, "utf8mb4"), (47, "latin1"), (54, "utf16"),
    (56, "utf16le"), (60, "utf32"), (63, "binary"), (83, "utf8mb3"), (95, "cp932"),
    (224, "utf8mb4"), (247, "utf8mb4"), (576, "utf8mb3"), (1032, "latin1"),
    (2048, "utf8mb3"), (3271, "utf32"), (3272, None),
]


@pytest.mark.parametrize("cid,charset", SERVER_IDS)
def test_server_ids(cid, charset):
    assert COLLATIONS.get(cid) == charset


def test_mysql_8_ids():
    assert COLLATIONS[255] == "utf8mb4"      # utf8mb4_0900_ai_ci
    assert COLLATIONS[309] == "utf8mb4"      # utf8mb4_0900_bin
    assert COLLATIONS[323] == "utf8mb4"
    assert COLLATIONS[248] == "gb18030"
    assert COLLATIONS[76] == "utf8mb3"       # utf8mb3_tolower_ci
    assert len(COLLATIONS) == 1242 + 73


@pytest.mark.parametrize("cid,codec", [
    (63, None), (33, "utf-8"), (45, "utf-8"), (255, "utf-8"), (8, "mysql_latin1"),
    (35, "utf-16-be"), (56, "utf-16-le"), (60, "utf-32-be"), (13, "shift_jis"),
    (12, "euc_jp"), (19, "euc_kr"), (248, "gb18030"), (3, None), (None, None), (99999, None),
])
def test_codecs(cid, codec):
    assert codec_for_collation(cid) == codec


def test_mysql_latin1_never_fails():
    every = bytes(range(256))
    text = every.decode("mysql_latin1")
    assert len(text) == 256
    assert text[0x80] == "€" and text[0x81] == "\x81" and text[0x9D] == "\x9d"
    assert decode_mysql_latin1(b"ab\x80") == "ab€"
    assert text.encode("mysql_latin1") == every
