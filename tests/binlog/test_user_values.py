"""DSN parsing (binlog.user_values): one parser for --schema-from, --from and --to, and
no message of it ever shows the password."""
from __future__ import annotations

import pytest

from binlog.errors import UsageError
from binlog.user_values import parse_dsn, redact_dsn
from schema_store.errors import SchemaError
from schema_store.live import parse_dsn as store_parse_dsn


def test_fields_and_tls_parameters():
    kw = parse_dsn("mariadb://u:p%40ss@h:3307/db?ssl_ca=/ca.pem&ssl_verify_cert=1&read_timeout=5")
    assert kw == {"user": "u", "password": "p@ss", "host": "h", "port": 3307, "database": "db",
                  "ssl_ca": "/ca.pem", "ssl_verify_cert": True, "read_timeout": 5.0}


@pytest.mark.parametrize("dsn", ["http://u:s3cr3t@h/", "mysql://u:s3cr3t@h:99999/",
                                 "mysql://u:s3cr3t@h/?unknown=1",
                                 "mysql://u:s3cr3t@h/?read_timeout=soon"])
def test_bad_dsn_messages_never_show_the_password(dsn):
    with pytest.raises(UsageError) as info:
        parse_dsn(dsn)
    assert "s3cr3t" not in str(info.value)
    with pytest.raises(SchemaError) as info:        # --schema-from's parser is the same one
        store_parse_dsn(dsn)
    assert "s3cr3t" not in str(info.value)


def test_redact():
    assert redact_dsn("mysql://u:pw@h:1/db?read_timeout=1&x=2") == "mysql://u:***@h:1/db?read_timeout=1&x=..."
    assert redact_dsn("mysql://u@h/") == "mysql://u@h/"


SECRET = "s3cr3t"


@pytest.mark.parametrize("dsn", [
    "postgres://u:s3cr3t@h/", "mysql:/h", "mysql:h", "mysql:u:s3cr3t@h", "s3cr3t",
    "mysql://root:s3cr3t",                 # no '@': urlsplit takes the password for a port
    "mysql://u:s3/cr3t@h/db", "mysql://u:1/s3cr3t@h/db", "mysql://u:s3#cr3t@h/",
    "mysql://u:s3?cr3t@h/", "mysql://u:s3cr3t@[::1/", "mysql://u:s3cr3t@h:notaport/",
    "mysql://u:s3cr3t@h/?password=s3cr3t", "mysql://u:s3cr3t@h/a/b",
])
def test_malformed_dsns_are_refused_without_showing_anything_secret(dsn):
    with pytest.raises(UsageError) as info:
        parse_dsn(dsn)
    for part in ("s3cr3t", "cr3t", "s3"):
        assert part not in str(info.value), str(info.value)


@pytest.mark.parametrize("dsn", ["mysql://u:s3/cr3t@h/db", "mysql://u:s3#cr3t@h/",
                                 "mysql://root:s3cr3t", "mysql://u:s3cr3t@h/?password=s3cr3t",
                                 "mysql://u:s3cr3t@h:1/db?read_timeout=1"])
def test_redact_masks_whatever_may_be_a_password(dsn):
    assert "cr3t" not in redact_dsn(dsn)


def test_one_slash_is_not_localhost():
    with pytest.raises(UsageError, match="two slashes"):
        parse_dsn("mysql:/host")
    assert parse_dsn("mysql:///?unix_socket=/s") == {"user": "root", "password": "", "database": None,
                                                     "unix_socket": "/s"}


def test_password_file_gives_the_first_line(tmp_path):
    secret = tmp_path / "pw"
    secret.write_bytes(b" pa ss\r\nsecond line\n")
    kw = parse_dsn(f"mysql://u@h/?password_file={secret}")
    assert kw["password"] == " pa ss" and "password_file" not in kw
    assert redact_dsn(f"mysql://u@h/?password_file={secret}").endswith(f"password_file={secret}")


@pytest.mark.parametrize("content, why", [(b"x" * 5000, "no line end"), (b"\xff\xfe\n", "not UTF-8")])
def test_password_file_refusals_name_the_path_only(tmp_path, content, why):
    secret = tmp_path / "pw"
    secret.write_bytes(content)
    with pytest.raises(UsageError, match=why) as info:
        parse_dsn(f"mysql://u@h/?password_file={secret}")
    assert str(secret) in str(info.value) and "xxxx" not in str(info.value)


def test_password_file_and_a_password_together_are_refused(tmp_path):
    with pytest.raises(UsageError, match="not both") as info:
        parse_dsn(f"mysql://u:{SECRET}@h/?password_file={tmp_path}/pw")
    assert SECRET not in str(info.value)
    with pytest.raises(UsageError, match="No such file"):
        parse_dsn(f"mysql://u@h/?password_file={tmp_path}/missing")
